/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/page_huge.c - transparent huge pages for the page heap.
 * Once the page heap has committed HEAPSCOPE_HUGEPAGE_AFTER bytes of its
 * standard chunks, the rest of the current chunk and every later chunk
 * are advised MADV_HUGEPAGE; mappings of their own for requests larger
 * than a chunk are advised whenever the option is not negative (and so
 * are the samples of that size, region/blocks.c hs_region_wants_huge).
 * In THP's "madvise" mode (the default of Debian's kernels) only such
 * ranges get 2 MiB pages: a big heap then takes one fault per 2 MiB
 * instead of 512 and its TLB reach grows 512-fold (xmllint on a 22 MB
 * document: 47.6k minor faults -> 3k).  A small heap never gets them,
 * so its footprint is not rounded up to 2 MiB.
 *
 * Off by default (HEAPSCOPE_HUGEPAGE_AFTER -1): on this project's test
 * machines (Firecracker VMs with free page reporting,
 * page_reporting.page_reporting_order=11) a huge-page fault mostly lands
 * on memory the host has taken back, and faults it in again 4 KiB at a
 * time: in interleaved runs of bench/real_programs.sh's programs the
 * system time of xsltproc went 0.19 -> 0.87 s, xmllint 0.11 -> 0.46 s,
 * and the geo mean over the best peer 1.071 -> 1.257 (5 runs; back to
 * back runs of one program, whose memory the host still backs, were the
 * other way: xmllint 0.36-0.45 -> 0.25-0.30 s).  Hosts without free
 * page reporting (bare metal, most cloud VMs) may set it, e.g. 32M.
 * The large mappings were advised whatever the option said until GNU
 * sort's 1.3 GiB buffer (bench/real_programs.sh) was measured without
 * the advice, 7 interleaved runs: median wall 0.94 -> 0.78 s (glibc
 * 0.81), system time 0.18 -> 0.03 s, peak RSS 49.2 -> 47.4 MiB (glibc
 * 47.0: its ~40 MiB touched, rounded up to whole huge pages).
 *
 * A release there is exact, as elsewhere: MADV_DONTNEED of part of a huge
 * page splits it (its free pages go back, the rest stays mapped in 4 KiB
 * pages), so a released span is never resident and calloc() may take it
 * as zero.  What this leaves (in the closing note of issue 19): with
 * khugepaged's default max_ptes_none (511) khugepaged may collapse a
 * split range back into a full huge page in a long-running process,
 * making its released pages resident (zero) again; TCMalloc's
 * huge-page-aware page heap (Temeraire) avoids it by releasing whole huge
 * pages first.  Page heap lock held throughout.
 */
#include <stdint.h>

#include "base/options.h"
#include "base/os.h"
#include "core/page_heap_internal.h"

/* The end of the last chunk advised (one advice per chunk) */
static uintptr_t advised_hi;
static size_t grown; /* bytes committed to standard chunks, cumulative */

void hs_ph_huge_commit_locked(char *m, size_t bytes, char *chunk_hi)
{
	int64_t after = hs_option_get(HS_OPT_HUGEPAGE_AFTER);
	grown += bytes;
	if (after < 0 || grown <= (uint64_t)after)
		return;
	if (advised_hi == (uintptr_t)chunk_hi)
		return; /* this chunk is advised already */
	/* from this step to the chunk's end: the rest of the chunk that
	 * crossed the threshold, or a later chunk whole (m is its start);
	 * refused without THP in the kernel (EINVAL), and then not retried
	 * for this chunk */
	hs_os_hugepage(m, (size_t)(chunk_hi - m));
	advised_hi = (uintptr_t)chunk_hi;
}

void hs_ph_huge_own_locked(char *m, size_t bytes)
{
	/* refused without THP in the kernel (EINVAL): 4 KiB pages then */
	if (hs_option_get(HS_OPT_HUGEPAGE_AFTER) >= 0)
		hs_os_hugepage(m, bytes);
}
