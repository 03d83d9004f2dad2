/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/option_list.h - the HEAPSCOPE_<NAME> environment options,
 * once: options.c builds its table (name, default) from these lists,
 * options.h the HS_OPT_ / HS_SOPT_ enums, and man/libheapscope_env.c the
 * libheapscope(7) man page (the descriptions; none of their text is
 * compiled into the library).
 *
 * HS_INT_OPTIONS(X): X(ID, DEFAULT, SECURE, ARG, DESCRIPTION) per integer
 * option HEAPSCOPE_<ID>: DEFAULT an int64_t, SECURE whether it is honoured
 * in secure-execution mode (AT_SECURE: setuid, setgid, file capabilities),
 * ARG its kind for the man page, DESCRIPTION one paragraph.  Values take an
 * optional sign and a K/M/G suffix (powers of 1024); a bad value warns once
 * and keeps the default.
 * HS_STR_OPTIONS(X): X(ID, SECURE, ARG, DESCRIPTION) per string option,
 * used as found in environ.
 *
 * SECURE: no option is honoured in secure-execution mode today.  Each would
 * let the caller of a setuid program write a file as its owner
 * (PROFILE_AT_EXIT), print the privileged process's statistics on a
 * descriptor the caller holds (VERBOSE), make its sampling, and so which
 * blocks get pages of their own, predictable (SAMPLE_SEED), or set its
 * memory layout and cost: period 1 gives every block its own pages and
 * unwinds every allocation, 0 hides the process from the host's profiler
 * (SAMPLE_RATE, PROXY_MAX, REGION_BLOCK_MAX, RELEASE_RATE, SAMPLED_CACHE).
 * A new option starts with SECURE false unless none of that applies
 * (docs/reliability.md has the table; tests/test_options.c a row each).
 */
#ifndef HS_OPTION_LIST_H
#define HS_OPTION_LIST_H

#define HS_INT_OPTIONS(X)                                                      \
	X(SAMPLE_RATE, 2097152, false, "BYTES",                                       \
	  "Sampling period T: the mean number of allocated bytes between "     \
	  "two samples (a geometric sampler, so every byte has the same "      \
	  "chance 1/T).  0 or negative turns sampling off; 1 samples every "   \
	  "allocation.  A collector can change it at run time: "               \
	  "heapscope rate -p PID BYTES.")                                      \
	X(SAMPLE_SEED, 0, false, "N",                                                 \
	  "Seed of every thread's sampler.  0 seeds from the clock and the "   \
	  "thread id; any other value makes the samples of a deterministic "   \
	  "program repeat from run to run.")                                   \
	X(VERBOSE, 0, false, "LEVEL",                                                 \
	  "Messages on standard error: 0 warnings only, 1 a start-up line, "   \
	  "2 also the allocator's statistics at exit.")                        \
	X(RELEASE_RATE, 134217728, false, "BYTES",                                    \
	  "Free committed memory the page heap keeps.  Above it, "             \
	  "spans free for over a second go back to the operating system "     \
	  "(MADV_DONTNEED), and at once whatever exceeds twice the bytes in "  \
	  "use.  A span cut from released or new memory first gives back "     \
	  "as much free memory, oldest first, and so does a large block of "   \
	  "the sampled region cut from fresh pages.  0 releases every free "  \
	  "span at once.")                                                     \
	X(HUGEPAGE_AFTER, -1, false, "BYTES",                                   \
	  "Page heap memory committed beyond this many bytes is advised "      \
	  "MADV_HUGEPAGE, so that in THP's madvise mode a big heap gets "      \
	  "2 MiB pages (fewer faults, fewer TLB misses) and a small one "      \
	  "keeps its 4 KiB footprint; blocks over 64 MiB (sampled or not) "   \
	  "get them whenever it is not negative.  0: from the first byte; "   \
	  "negative: never.")                                                  \
	X(SAMPLED_CACHE, 134217728, false, "BYTES",                                   \
	  "Freed pages of the sampled region (samples, and the large blocks "  \
	  "kept there) kept committed and reused first: this many bytes, or "  \
	  "twice the region's pages in use if more.  Above it a run not "      \
	  "reused within a second goes back; the old copy of a block realloc " \
	  "moved to fresh pages is not kept.  0 decommits at once, so a "      \
	  "sample's pages are resident only where its owner touched them.")    \
	X(PROXY_MAX, 4096, false, "BYTES",                                            \
	  "Largest allocated (size-class) size whose samples hold a proxy "    \
	  "object for the fragmentation profile.  0: no proxies; up to 256K "  \
	  "widens the profile to bigger classes at the cost of one extra "     \
	  "object per such sample.")                                           \
	X(REGION_BLOCK_MAX, 67108864, false, "BYTES",                                 \
	  "Largest unsampled block (over 256 KiB) placed in the sampled "      \
	  "region next to the sampled ones, so large blocks draw on one pool " \
	  "of pages whether sampled or not.  0: every unsampled block in the " \
	  "page heap.")

#define HS_STR_OPTIONS(X)                                                      \
	X(PROFILE_AT_EXIT, false, "PATH",                                             \
	  "Write the heap profile to PATH when the program exits: folded "     \
	  "stacks, or a gzip'd pprof profile when PATH ends in .pb.gz.")

#endif /* HS_OPTION_LIST_H */
