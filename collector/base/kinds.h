/* SPDX-License-Identifier: MIT */
/*
 * kinds.h - the collector's vocabulary: which profile, which value, which
 * output format, which probes.  Every stage names these; their text
 * (command line, HTTP query, output) is parsed and printed only in
 * kinds.c.  The parsers return 0 or -EINVAL (*out unchanged); the name
 * functions return static strings.  All are thread-safe.
 */
#ifndef HS_KINDS_H
#define HS_KINDS_H

#include <stdbool.h>

enum hs_value {
	HS_VALUE_INUSE = 0, /* estimated allocated bytes a*W/(r+1) (default) */
	HS_VALUE_REQUESTED, /* estimated requested bytes r*W/(r+1) */
	HS_VALUE_OBJECTS,   /* estimated objects W/(r+1) */
	/* residency (residency.c): inuse scaled by the fraction of the
	 * sample's OS pages in that state */
	HS_VALUE_RESIDENT,     /* present, not the shared zero page */
	HS_VALUE_SWAPPED,      /* swapped out */
	HS_VALUE_NOT_RESIDENT, /* never touched (or zero page, or dropped) */
	HS_VALUE_HUGE,	       /* backed by a THP / huge page */
	/* lifetime profile (window.c) */
	HS_VALUE_LIFETIME_MEAN, /* ns, weighted by estimated objects */
	HS_VALUE_LIFETIME_MIN,	/* ns */
	HS_VALUE_LIFETIME_MAX,	/* ns */
	HS_VALUE_LIFETIME_SUM,	/* ns: Σ c·t, the objects' summed lifetimes */
	HS_VALUE_SAME_THREAD,	/* estimated objects freed by their allocator */
	/* fragmentation profile (fragmentation.c) */
	HS_VALUE_FRAGMENTATION, /* bytes, proxy method (docs/profiles.md) */
	HS_VALUE_FRAGMENTATION_AGE, /* bytes, age-weighted attribution */
	/* allocations since the daemon first followed the process
	 * (hs_alloc_totals__add): the daemon's allocs profile */
	HS_VALUE_ALLOC_SPACE,	/* estimated allocated bytes */
	HS_VALUE_ALLOC_OBJECTS, /* estimated objects */
};

/* What `record --profile` reports (DESIGN.md section 6). */
enum hs_profile_kind {
	HS_PROFILE_HEAP = 0,	  /* live samples now (+ residency) */
	HS_PROFILE_ALLOCS,	  /* sampled allocations within the window */
	HS_PROFILE_LIFETIME,	  /* allocated and freed within the window */
	HS_PROFILE_PEAK,	  /* heap at the highest estimated total */
	HS_PROFILE_FRAGMENTATION, /* bytes held by proxies' spans */
};

enum hs_format {
	HS_FORMAT_FOLDED = 0, /* frame;frame;leaf VALUE */
	HS_FORMAT_PPROF,      /* gzip'd profile.proto */
	HS_FORMAT_TEXT,	      /* short top list */
};

/* Which probes carry the samples (abi.h; --provider). */
enum hs_provider {
	HS_PROVIDER_AUTO = 0,	/* heapscope if the target has its probes,
				 * else otel_memory, else ddheap */
	HS_PROVIDER_HEAPSCOPE,	/* heapscope:sample_alloc/sample_free + registry */
	HS_PROVIDER_OTEL,	/* otel_memory:alloc/free */
	HS_PROVIDER_DDHEAP,	/* ddheap:alloc/free */
};

/* ----------------------------------------------------------- "kinds.c" */

/* --value: "inuse" (or "inuse_space"), "requested", "objects" (or
 * "inuse_objects"), "resident", "swapped", "not_resident", "huge",
 * "lifetime_mean", "lifetime_min", "lifetime_max", "lifetime" (the sum),
 * "same_thread",
 * "fragmentation", "fragmentation_age". */
int hs_parse_value(const char *s, enum hs_value *out);
/* The unit a value is stated in ("inuse bytes", "objects", ...). */
const char *hs_value_name(enum hs_value v);
/* --profile: "heap", "allocs", "lifetime", "peak", "fragmentation". */
int hs_parse_profile(const char *s, enum hs_profile_kind *out);
/* Folded value when --value is not given: objects for lifetime,
 * fragmentation for fragmentation, inuse otherwise. */
enum hs_value hs_profile_kind__default_value(enum hs_profile_kind kind);
/* Whether value v belongs to profile kind (its aggregates carry it):
 * inuse, requested and objects everywhere; residency values for heap;
 * lifetime_* and same_thread for lifetime; fragmentation[_age] for
 * fragmentation.  _values: those names as one list for messages. */
bool hs_profile_kind__has_value(enum hs_profile_kind kind, enum hs_value v);
const char *hs_profile_kind__values(enum hs_profile_kind kind);
/* "heap", "allocs", "lifetime", "peak", "fragmentation". */
const char *hs_profile_kind__name(enum hs_profile_kind kind);
/* --format, ?format=: "folded", "pprof", "text". */
int hs_parse_format(const char *s, enum hs_format *out);
/* --provider: "auto", "heapscope", "otel_memory" (or "otel"), "ddheap". */
int hs_parse_provider(const char *s, enum hs_provider *out);
/* The USDT provider name ("heapscope", "otel_memory", "ddheap"; "auto"). */
const char *hs_provider_name(enum hs_provider p);

#endif /* HS_KINDS_H */
