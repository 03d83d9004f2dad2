/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/options.c - the one table of HEAPSCOPE_<NAME> options.
 *
 * Options are read by scanning environ directly (getenv is not safe this
 * early and may not be ready while the dynamic loader runs us).  Values
 * accept an optional sign and a K/M/G suffix (powers of 1024).  A bad
 * value warns once and keeps the default.  The first malloc may run
 * before environ is set: then every option has its default until the
 * library constructor calls hs_options_init() again.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/log.h"
#include "base/options.h"

extern char **environ;

typedef struct option_desc {
	int64_t value;         /* current value */
	const int64_t dflt;    /* default */
	const char *const name; /* environment name */
	bool warned;           /* a bad value was reported already */
} option_desc_t;

static option_desc_t options[HS_OPT_COUNT] = {
	/* sampling period in bytes (mean bytes between samples); <= 0 off */
	[HS_OPT_SAMPLE_RATE] = { 2097152, 2097152, "HEAPSCOPE_SAMPLE_RATE", 0 },
	/* 0 = seeds from the clock and thread id; else deterministic */
	[HS_OPT_SAMPLE_SEED] = { 0, 0, "HEAPSCOPE_SAMPLE_SEED", 0 },
	/* log level: 0 warnings only, 1 info, 2 debug */
	[HS_OPT_VERBOSE] = { 0, 0, "HEAPSCOPE_VERBOSE", 0 },
	/* bytes of free committed memory the page heap keeps before it
	 * gives memory back to the OS (MADV_DONTNEED); 0 = release every
	 * free span at once.  128 MiB: a heap of a few large blocks per
	 * thread keeps the free runs between them (large_blocks: 64 MiB
	 * released and refaulted 50% more pages, 2x the run time) */
	[HS_OPT_RELEASE_RATE] = { 134217728, 134217728,
				  "HEAPSCOPE_RELEASE_RATE", 0 },
	/* bytes of freed pages of the sampled region (samples and the large
	 * blocks kept there) kept committed for reuse (as much as the page
	 * heap keeps); 0 = decommit at once, so a sample's pages are
	 * resident only where its owner touched them */
	[HS_OPT_SAMPLED_CACHE] = { 134217728, 134217728,
				   "HEAPSCOPE_SAMPLED_CACHE", 0 },
	/* largest allocated (size-class) size, in bytes, whose samples hold
	 * a proxy object for the fragmentation profile; default one OS page,
	 * where a proxy costs no more than the page rounding it replaces;
	 * 0 = no proxies; up to 256K (the small classes) widens the profile
	 * at the cost of a whole extra object per larger sample */
	[HS_OPT_PROXY_MAX] = { 4096, 4096, "HEAPSCOPE_PROXY_MAX", 0 },
	/* largest unsampled large block (over 256 KiB) placed in the sampled
	 * region, with the sampled large blocks, rather than in the page
	 * heap (one pool of pages for both, sampled.c); 0 = none */
	[HS_OPT_REGION_BLOCK_MAX] = { 67108864, 67108864,
				      "HEAPSCOPE_REGION_BLOCK_MAX", 0 },
};

/* String options: name only, the value is used as found in environ. */
static const char *const str_options[HS_SOPT_COUNT] = {
	/* PATH: write the heap profile there at exit (folded text, or
	 * gzip'd pprof when PATH ends in .pb.gz) */
	[HS_SOPT_PROFILE_AT_EXIT] = "HEAPSCOPE_PROFILE_AT_EXIT",
};

/* Parses s as [+-]digits[K|M|G]; returns false on any other input or on
 * overflow. */
static bool parse_int(const char *s, int64_t *out)
{
	bool neg = false;
	uint64_t v = 0;
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s++ - '0');
	}
	unsigned shift = 0;
	switch (*s) {
	case 'k': case 'K': shift = 10; s++; break;
	case 'm': case 'M': shift = 20; s++; break;
	case 'g': case 'G': shift = 30; s++; break;
	default: break;
	}
	if (*s == 'i' && shift)
		s++;
	if ((*s == 'b' || *s == 'B') && shift)
		s++;
	if (*s != '\0')
		return false;
	if (shift && v > (UINT64_MAX >> shift))
		return false;
	v <<= shift;
	if (v > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

void hs_options_init(void)
{
	char **env = environ;
	if (!env)
		return;
	for (; *env; env++) {
		const char *e = *env;
		if (strncmp(e, "HEAPSCOPE_", 10) != 0)
			continue;
		for (int i = 0; i < HS_OPT_COUNT; i++) {
			option_desc_t *o = &options[i];
			size_t len = strlen(o->name);
			if (strncmp(e, o->name, len) != 0 || e[len] != '=')
				continue;
			int64_t v;
			if (parse_int(e + len + 1, &v)) {
				__atomic_store_n(&o->value, v, __ATOMIC_RELAXED);
			} else if (!o->warned) {
				o->warned = true;
				hs_log("heapscope: bad value %s for %s, keeping "
				       "default %ld",
				       e + len + 1, o->name, (long)o->dflt);
			}
		}
	}
}

int64_t hs_option_get(hs_option_t opt)
{
	if ((unsigned)opt >= HS_OPT_COUNT)
		return 0;
	return __atomic_load_n(&options[opt].value, __ATOMIC_RELAXED);
}

const char *hs_option_string(hs_str_option_t opt)
{
	size_t len;

	if ((unsigned)opt >= HS_SOPT_COUNT || !environ)
		return NULL;
	len = strlen(str_options[opt]);
	for (char **env = environ; *env; env++)
		if (strncmp(*env, str_options[opt], len) == 0 &&
		    (*env)[len] == '=')
			return *env + len + 1;
	return NULL;
}
