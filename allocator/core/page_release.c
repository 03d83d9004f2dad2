/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/page_release.c - the page heap's release policy: which
 * committed free spans go back to the OS (MADV_DONTNEED), and when: by
 * the floor, the cap and the decay after frees, and by the swap on
 * fault-in when a span is cut from released memory.  The
 * free lists themselves are page_heap.c.  Page heap lock held
 * throughout.
 */
#include <stdint.h>

#include "base/clock.h"
#include "base/options.h"
#include "base/os.h"
#include "base/stats.h"
#include "core/page_heap_internal.h"

/* Free committed memory above the floor (HEAPSCOPE_RELEASE_RATE) is
 * given back once it has not been reused for this long ... */
#define RELEASE_DELAY_MS 1000u
/* ... checked at most this often (each check scans the committed
 * lists) ... */
#define DECAY_CHECK_MS 100u
/* ... and never more than this many times the bytes in use is kept. */
#define CAP_IN_USE_FACTOR 2
static uint32_t last_decay_ms; /* last decay check */

/* Gives free span s (on no list) back to the OS. */
static void release_off_list_locked(hs_span_t *s)
{
	hs_os_decommit(hs_span_addr(s), hs_span_bytes(s));
	hs_stat_add(HS_STAT_release_calls_count, 1);
	hs_stat_add(HS_STAT_released_total_bytes, (int64_t)hs_span_bytes(s));
	hs_ph_free_locked(s, HS_SPAN_RELEASED);
}

static void release_span_locked(hs_span_t *s)
{
	hs_ph_list_remove(s);
	release_off_list_locked(s);
}

/* The committed free span freed longest ago (times compared modulo
 * 2^32 relative to now), NULL if none; *age gets its age in ms.  A scan
 * of the committed lists: this runs only when the release policy
 * triggers, and the committed free spans are few (they coalesce). */
static hs_span_t *oldest_committed_locked(uint32_t now, uint32_t *age)
{
	hs_span_t *best = NULL;
	uint32_t best_age = 0;
	for (size_t n = 1; n <= MAX_LIST; n++)
		for (hs_span_t *s = hs_ph_lists[COMMITTED][n]; s; s = s->next) {
			uint32_t a = now - s->free_ms;
			if (!best || a > best_age) {
				best = s;
				best_age = a;
			}
		}
	if (age)
		*age = best_age;
	return best;
}

/* Releases at least `bytes` of committed free memory (or all of it),
 * oldest spans first. */
size_t hs_ph_release_locked(size_t bytes)
{
	size_t done = 0;
	if (bytes == SIZE_MAX) {
		/* everything: no need to order */
		for (size_t n = 1; n <= MAX_LIST; n++) {
			hs_span_t *s;
			while ((s = hs_ph_lists[COMMITTED][n])) {
				done += hs_span_bytes(s);
				release_span_locked(s);
			}
		}
		return done;
	}
	hs_span_t *s;
	uint32_t now = hs_clock_coarse_ms();
	while (done < bytes && (s = oldest_committed_locked(now, NULL))) {
		done += hs_span_bytes(s);
		release_span_locked(s);
	}
	return done;
}

/* The release policy, after each free into the page heap.  Committed
 * free memory up to HEAPSCOPE_RELEASE_RATE (the floor) is always kept.
 * Above it, spans go back to the OS, oldest first, once they have been
 * free for RELEASE_DELAY_MS (jemalloc's dirty-page decay works the same
 * way, with 10 s), and at once while committed free memory exceeds
 * CAP_IN_USE_FACTOR times the bytes in use.  A fixed 64 MiB cap made a
 * heap of a few large blocks per thread (large_blocks at 2 threads:
 * ~60 MB in use, ~130 MB free between them) madvise and fault in 3x its
 * size in one second; tcmalloc and jemalloc keep it all.  After the
 * whole heap is freed, in use is 0 and the cap is the floor again.
 * RELEASE_RATE 0 releases every free span at once. */
void hs_ph_release_policy_locked(void)
{
	int64_t floor = hs_option_get(HS_OPT_RELEASE_RATE);
	int64_t free_bytes = hs_stat_get(HS_STAT_pageheap_free_bytes);
	if (floor < 0)
		floor = 0;
	if (free_bytes <= floor)
		return;
	int64_t in_use = hs_stat_get(HS_STAT_pageheap_large_bytes) +
			 hs_stat_get(HS_STAT_small_span_bytes);
	int64_t cap = floor ? in_use * CAP_IN_USE_FACTOR : 0;
	if (cap < floor)
		cap = floor;
	if (free_bytes > cap) {
		hs_ph_release_locked((size_t)(free_bytes - cap));
		return;
	}
	uint32_t now = hs_clock_coarse_ms();
	if (now - last_decay_ms < DECAY_CHECK_MS)
		return;
	last_decay_ms = now;
	hs_span_t *s;
	uint32_t age;
	while (hs_stat_get(HS_STAT_pageheap_free_bytes) > floor &&
	       (s = oldest_committed_locked(now, &age)) &&
	       age >= RELEASE_DELAY_MS)
		release_span_locked(s);
}

/* Swap on fault-in: when a span is cut from released memory (the heap
 * grows, or reuses pages it gave back), as much committed free memory
 * as it is about to fault in goes back to the OS, oldest first (the
 * last span cut to size), whatever the floor and the decay say.  The
 * footprint then grows only by what the committed free spans could not
 * cover: they did not fit the request (so they were not going to serve
 * it), and the new pages fault in anyway.  Without it, the free spans
 * under the floor stayed resident next to the new ones (git's repack:
 * free 4-64 KiB delta buffers; peak RSS 24.6 -> 24.1 MiB, glibc 21.0;
 * RELEASE_RATE=0, every free span released at once, 22.6).  The cost:
 * a released span reused later faults again (minor faults: git +11 %,
 * gcc +7 %; whole spans, not cut to size, gcc +14 %; only spans free
 * for 20 ms or more: git +5 %, gcc +1 %, and git's peak 24.3 MiB).
 * gperftools' page heap also releases as it grows. */
void hs_ph_release_on_fault_locked(size_t bytes)
{
	size_t done = 0;
	hs_span_t *s;
	uint32_t now = hs_clock_coarse_ms();
	while (done < bytes && hs_stat_get(HS_STAT_pageheap_free_bytes) > 0 &&
	       (s = oldest_committed_locked(now, NULL))) {
		size_t need = bytes - done;
		hs_span_t *t;
		if (hs_span_bytes(s) > need &&
		    (t = hs_ph_split_tail_locked(s, need >> HS_PAGE_SHIFT))) {
			release_off_list_locked(t);
			return;
		}
		done += hs_span_bytes(s);
		release_span_locked(s);
	}
}
