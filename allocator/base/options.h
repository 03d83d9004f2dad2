/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/options.h - the HEAPSCOPE_<NAME> environment options
 * (options.c: one table, read by scanning environ, no getenv).
 */
#ifndef HS_OPTIONS_H
#define HS_OPTIONS_H

#include <stdint.h>

typedef enum hs_option {
	HS_OPT_SAMPLE_RATE,      /* bytes, default 2 MiB; <= 0 off; 1 = all */
	HS_OPT_SAMPLE_SEED,      /* 0 = random seeds, else deterministic */
	HS_OPT_VERBOSE,          /* log level, default 0 */
	HS_OPT_RELEASE_RATE,     /* page heap release policy knob */
	HS_OPT_SAMPLED_CACHE,    /* bytes of freed sampled pages kept committed */
	HS_OPT_PROXY_MAX,        /* largest size class given a proxy; 0 none */
	HS_OPT_REGION_BLOCK_MAX, /* largest unsampled block in the region */
	HS_OPT_COUNT
} hs_option_t;
/* String-valued options (same table style, no parsing). */
typedef enum hs_str_option {
	HS_SOPT_PROFILE_AT_EXIT, /* PATH: heap profile written at exit */
	HS_SOPT_COUNT
} hs_str_option_t;
/* The option's value as found in environ now, or NULL.  Scans environ:
 * call from constructors / the API, not from inside malloc. */
const char *hs_option_string(hs_str_option_t opt);
/* Value of an option (parsed once from environ; K/M/G suffixes). */
int64_t hs_option_get(hs_option_t opt);
/* Re-read options from environ (called from the library constructor in
 * case the first malloc ran before environ was set). */
void hs_options_init(void);

#endif /* HS_OPTIONS_H */
