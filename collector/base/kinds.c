// SPDX-License-Identifier: MIT
/*
 * kinds.c - the collector's vocabulary as text: the names of the values
 * (--value), profiles (--profile), output formats (--format) and probe
 * providers (--provider), parsed and printed in this one place for
 * `record`, the daemon's HTTP queries and the exports.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "heapscope/abi.h"
#include "kinds.h"

int hs_parse_value(const char *s, enum hs_value *out)
{
	if (!strcmp(s, "inuse") || !strcmp(s, "inuse_space"))
		*out = HS_VALUE_INUSE;
	else if (!strcmp(s, "requested"))
		*out = HS_VALUE_REQUESTED;
	else if (!strcmp(s, "objects") || !strcmp(s, "inuse_objects"))
		*out = HS_VALUE_OBJECTS;
	else if (!strcmp(s, "resident"))
		*out = HS_VALUE_RESIDENT;
	else if (!strcmp(s, "swapped"))
		*out = HS_VALUE_SWAPPED;
	else if (!strcmp(s, "not_resident"))
		*out = HS_VALUE_NOT_RESIDENT;
	else if (!strcmp(s, "huge"))
		*out = HS_VALUE_HUGE;
	else if (!strcmp(s, "lifetime_mean"))
		*out = HS_VALUE_LIFETIME_MEAN;
	else if (!strcmp(s, "lifetime_min"))
		*out = HS_VALUE_LIFETIME_MIN;
	else if (!strcmp(s, "lifetime_max"))
		*out = HS_VALUE_LIFETIME_MAX;
	else if (!strcmp(s, "lifetime"))
		*out = HS_VALUE_LIFETIME_SUM;
	else if (!strcmp(s, "same_thread"))
		*out = HS_VALUE_SAME_THREAD;
	else if (!strcmp(s, "fragmentation"))
		*out = HS_VALUE_FRAGMENTATION;
	else if (!strcmp(s, "fragmentation_age"))
		*out = HS_VALUE_FRAGMENTATION_AGE;
	else
		return -EINVAL;
	return 0;
}

const char *hs_value_name(enum hs_value v)
{
	switch (v) {
	case HS_VALUE_REQUESTED:
		return "requested bytes";
	case HS_VALUE_OBJECTS:
		return "objects";
	case HS_VALUE_RESIDENT:
		return "resident bytes";
	case HS_VALUE_SWAPPED:
		return "swapped bytes";
	case HS_VALUE_NOT_RESIDENT:
		return "not-resident bytes";
	case HS_VALUE_HUGE:
		return "huge-page bytes";
	case HS_VALUE_LIFETIME_MEAN:
		return "ns mean lifetime";
	case HS_VALUE_LIFETIME_MIN:
		return "ns min lifetime";
	case HS_VALUE_LIFETIME_MAX:
		return "ns max lifetime";
	case HS_VALUE_LIFETIME_SUM:
		return "ns summed lifetime";
	case HS_VALUE_SAME_THREAD:
		return "objects freed by their thread";
	case HS_VALUE_FRAGMENTATION:
		return "fragmentation bytes (proxy)";
	case HS_VALUE_FRAGMENTATION_AGE:
		return "fragmentation bytes (age-weighted)";
	case HS_VALUE_ALLOC_SPACE:
		return "allocated bytes";
	case HS_VALUE_ALLOC_OBJECTS:
		return "allocated objects";
	default:
		return "inuse bytes";
	}
}

/* --profile names, indexed by enum hs_profile_kind */
static const char *const profile_names[] = {"heap", "allocs", "lifetime",
					    "peak", "fragmentation"};

int hs_parse_profile(const char *s, enum hs_profile_kind *out)
{
	for (size_t i = 0; i < sizeof(profile_names) / sizeof(*profile_names);
	     i++) {
		if (!strcmp(s, profile_names[i])) {
			*out = (enum hs_profile_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}

enum hs_value hs_profile_kind__default_value(enum hs_profile_kind kind)
{
	switch (kind) {
	case HS_PROFILE_LIFETIME:
		return HS_VALUE_OBJECTS;
	case HS_PROFILE_FRAGMENTATION:
		return HS_VALUE_FRAGMENTATION;
	default:
		return HS_VALUE_INUSE;
	}
}

/* Which values each profile's aggregates carry (window.c, profile.c,
 * fragmentation.c, residency.c fill them). */
static const char *const profile_values[] = {
	[HS_PROFILE_HEAP] = "inuse, requested, objects, resident, swapped, "
			    "not_resident, huge",
	[HS_PROFILE_ALLOCS] = "inuse, requested, objects",
	[HS_PROFILE_LIFETIME] = "objects, inuse, requested, lifetime, "
				"lifetime_mean, lifetime_min, lifetime_max, "
				"same_thread",
	[HS_PROFILE_PEAK] = "inuse, requested, objects",
	[HS_PROFILE_FRAGMENTATION] = "fragmentation, fragmentation_age, "
				     "inuse, requested, objects",
};

bool hs_profile_kind__has_value(enum hs_profile_kind kind, enum hs_value v)
{
	if (v == HS_VALUE_INUSE || v == HS_VALUE_REQUESTED ||
	    v == HS_VALUE_OBJECTS)
		return true;
	switch (kind) {
	case HS_PROFILE_HEAP:
		return v >= HS_VALUE_RESIDENT && v <= HS_VALUE_HUGE;
	case HS_PROFILE_LIFETIME:
		return v >= HS_VALUE_LIFETIME_MEAN &&
		       v <= HS_VALUE_SAME_THREAD;
	case HS_PROFILE_FRAGMENTATION:
		return v == HS_VALUE_FRAGMENTATION ||
		       v == HS_VALUE_FRAGMENTATION_AGE;
	default:
		return false;
	}
}

const char *hs_profile_kind__values(enum hs_profile_kind kind)
{
	if ((unsigned)kind >= sizeof(profile_values) / sizeof(*profile_values))
		return "";
	return profile_values[kind];
}

const char *hs_profile_kind__name(enum hs_profile_kind kind)
{
	if ((unsigned)kind >= sizeof(profile_names) / sizeof(*profile_names))
		return "?";
	return profile_names[kind];
}

int hs_parse_format(const char *s, enum hs_format *out)
{
	if (!strcmp(s, "folded"))
		*out = HS_FORMAT_FOLDED;
	else if (!strcmp(s, "pprof"))
		*out = HS_FORMAT_PPROF;
	else if (!strcmp(s, "text"))
		*out = HS_FORMAT_TEXT;
	else
		return -EINVAL;
	return 0;
}

int hs_parse_provider(const char *s, enum hs_provider *out)
{
	if (!strcmp(s, "auto"))
		*out = HS_PROVIDER_AUTO;
	else if (!strcmp(s, HEAPSCOPE_PROVIDER))
		*out = HS_PROVIDER_HEAPSCOPE;
	else if (!strcmp(s, HEAPSCOPE_COMPAT_OTEL) || !strcmp(s, "otel"))
		*out = HS_PROVIDER_OTEL;
	else if (!strcmp(s, HEAPSCOPE_COMPAT_DDHEAP))
		*out = HS_PROVIDER_DDHEAP;
	else
		return -EINVAL;
	return 0;
}

const char *hs_provider_name(enum hs_provider p)
{
	switch (p) {
	case HS_PROVIDER_HEAPSCOPE:
		return HEAPSCOPE_PROVIDER;
	case HS_PROVIDER_OTEL:
		return HEAPSCOPE_COMPAT_OTEL;
	case HS_PROVIDER_DDHEAP:
		return HEAPSCOPE_COMPAT_DDHEAP;
	default:
		return "auto";
	}
}
