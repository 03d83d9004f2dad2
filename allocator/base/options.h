/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/options.h - the HEAPSCOPE_<NAME> environment options
 * (options.c: one table, read by scanning environ, no getenv).
 */
#ifndef HS_OPTIONS_H
#define HS_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Every option, with its default, written once (each default may be
 * changed at build time with -DHS_DEFAULT_<NAME>=value, as mimalloc's
 * MI_OPTION defaults).  X(NAME, default, secure) gives HEAPSCOPE_<NAME>,
 * HS_OPT_<NAME> and whether secure-execution mode honours it (options.c
 * says why none does today).  Sizes in bytes.
 */

/* sampling period (mean bytes between samples); <= 0 off; 1 = every
 * allocation */
#ifndef HS_DEFAULT_SAMPLE_RATE
#define HS_DEFAULT_SAMPLE_RATE 2097152
#endif
/* 0 = seeds from getrandom (else the clock and thread id); else
 * deterministic */
#ifndef HS_DEFAULT_SAMPLE_SEED
#define HS_DEFAULT_SAMPLE_SEED 0
#endif
/* log level: 0 warnings only, 1 info, 2 debug (statistics at exit) */
#ifndef HS_DEFAULT_VERBOSE
#define HS_DEFAULT_VERBOSE 0
#endif
/* free committed memory the page heap keeps before it gives memory back
 * to the OS (MADV_DONTNEED); 0 = release every free span at once.
 * 128 MiB: a heap of a few large blocks per thread keeps the free runs
 * between them (large_blocks: 64 MiB released and refaulted 50% more
 * pages, 2x the run time) */
#ifndef HS_DEFAULT_RELEASE_RATE
#define HS_DEFAULT_RELEASE_RATE 134217728
#endif
/* freed pages of the sampled region (samples and the large blocks kept
 * there) kept committed for reuse (as much as the page heap keeps);
 * 0 = decommit at once, so a sample's pages are resident only where its
 * owner touched them */
#ifndef HS_DEFAULT_SAMPLED_CACHE
#define HS_DEFAULT_SAMPLED_CACHE 134217728
#endif
/* largest allocated (size-class) size whose samples hold a proxy object
 * for the fragmentation profile; default one OS page, where a proxy
 * costs no more than the page rounding it replaces; 0 = no proxies; up
 * to 256K (the small classes) widens the profile at the cost of a whole
 * extra object per larger sample */
#ifndef HS_DEFAULT_PROXY_MAX
#define HS_DEFAULT_PROXY_MAX 4096
#endif
/* largest unsampled large block (over 256 KiB) placed in the sampled
 * region, with the sampled large blocks, rather than in the page heap
 * (one pool of pages for both, region/blocks.c); 0 = none */
#ifndef HS_DEFAULT_REGION_BLOCK_MAX
#define HS_DEFAULT_REGION_BLOCK_MAX 67108864
#endif

#define HS_OPTIONS_LIST(X)                                                     \
	X(SAMPLE_RATE, HS_DEFAULT_SAMPLE_RATE, false)                          \
	X(SAMPLE_SEED, HS_DEFAULT_SAMPLE_SEED, false)                          \
	X(VERBOSE, HS_DEFAULT_VERBOSE, false)                                  \
	X(RELEASE_RATE, HS_DEFAULT_RELEASE_RATE, false)                        \
	X(SAMPLED_CACHE, HS_DEFAULT_SAMPLED_CACHE, false)                      \
	X(PROXY_MAX, HS_DEFAULT_PROXY_MAX, false)                              \
	X(REGION_BLOCK_MAX, HS_DEFAULT_REGION_BLOCK_MAX, false)

/*
 * String options, X(NAME, secure): the value is used as found in
 * environ (no copy, no parsing).
 *   PROFILE_AT_EXIT  PATH: write the heap profile there at exit (folded
 *                    text, or gzip'd pprof when PATH ends in .pb.gz);
 *                    opened by this process, so never in
 *                    secure-execution mode
 */
#define HS_STR_OPTIONS_LIST(X) X(PROFILE_AT_EXIT, false)

typedef enum hs_option {
#define HS_OPT_ENUM(name, dflt, secure) HS_OPT_##name,
	HS_OPTIONS_LIST(HS_OPT_ENUM)
#undef HS_OPT_ENUM
		HS_OPT_COUNT
} hs_option_t;

typedef enum hs_str_option {
#define HS_SOPT_ENUM(name, secure) HS_SOPT_##name,
	HS_STR_OPTIONS_LIST(HS_SOPT_ENUM)
#undef HS_SOPT_ENUM
		HS_SOPT_COUNT
} hs_str_option_t;

/* The value of a string option as the last scan found it in environ
 * (a pointer into the environment, not a copy), or NULL when unset or
 * ignored in secure-execution mode. */
const char *hs_option_string(hs_str_option_t opt);
/* Value of an option (parsed by the last scan; K/M/G suffixes). */
int64_t hs_option_get(hs_option_t opt);
/* Re-read options from environ, in secure-execution mode when
 * getauxval(AT_SECURE) says so (called lazily by the first malloc, again
 * from the library constructor in case that malloc ran before environ was
 * set).  Not thread-safe against itself: start-up only. */
void hs_options_init(void);
/* The scan behind hs_options_init: options from env (NULL-terminated;
 * NULL = none).  secure: secure-execution mode, where only the options
 * whose table entry says so are read and every other one is reset to
 * its default (options.c; docs/reliability.md).  Exposed for tests. */
void hs_options_scan(char *const *env, bool secure);

#endif /* HS_OPTIONS_H */
