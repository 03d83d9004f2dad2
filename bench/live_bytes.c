// SPDX-License-Identifier: MIT
/*
 * bench/live_bytes.c - the peak of a program's own live heap bytes, under
 * whatever allocator is preloaded after it (a measurement aid, not for
 * production):
 *
 *   cc -O2 -shared -fPIC -o live_bytes.so bench/live_bytes.c -ldl
 *   (bench/next_alloc.h finds the next allocator's functions)
 *   LD_PRELOAD="./live_bytes.so $ALLOCATOR" program...
 *
 * Counts malloc_usable_size of every block between its allocation and
 * its free (malloc, calloc, realloc, memalign, posix_memalign,
 * aligned_alloc; not C++'s operator new, which heapscope, mimalloc and
 * tcmalloc export and serve past malloc), and prints at exit, on stderr:
 *
 *   live_bytes: peak KIB
 *
 * Usable sizes include each allocator's rounding, so the figure differs
 * across allocators for one sequence of calls (cfrac 1754...363: 80-83
 * KiB under glibc, heapscope and tcmalloc, 161 under jemalloc; a list
 * of 10,000 1000-byte bytearrays in python3: 10.8-11.0 MiB under all
 * four).  What it is for: programs whose
 * sequence of calls depends on timing, such as mimalloc-bench's rptestN,
 * where a thread frees what the other handed it only when it gets to it:
 * there the program's live set itself moves with the allocator's speed,
 * and so does its peak RSS (bench/README.md, "rptestN's live set").
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>

#include "next_alloc.h"

static long live, peak;

static void count(void *p, int sign)
{
	if (!p || next_is_early(p))
		return;
	long v = __atomic_add_fetch(&live, sign * (long)next.usable_size(p),
				    __ATOMIC_RELAXED);
	long q = __atomic_load_n(&peak, __ATOMIC_RELAXED);
	while (v > q &&
	       !__atomic_compare_exchange_n(&peak, &q, v, 0, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

void *malloc(size_t n)
{
	next_resolve();
	if (!next.malloc)
		return next_early_alloc(n);
	void *p = next.malloc(n);
	count(p, 1);
	return p;
}

void *calloc(size_t k, size_t n)
{
	next_resolve();
	/* not resolved whole (next.calloc may be, next.usable_size not
	 * yet): the static buffer, zero */
	if (!next.malloc) {
		size_t bytes;
		if (__builtin_mul_overflow(k, n, &bytes))
			return NULL;
		return next_early_alloc(bytes);
	}
	void *p = next.calloc(k, n);
	count(p, 1);
	return p;
}

void *realloc(void *old, size_t n)
{
	next_resolve();
	if (next_is_early(old))
		return NULL; /* dlsym does not grow its own blocks */
	count(old, -1);
	void *p = next.realloc(old, n);
	if (p)
		count(p, 1);
	else if (n)
		count(old, 1); /* failed: old is still live */
	return p;
}

void *memalign(size_t align, size_t n)
{
	next_resolve();
	void *p = next.memalign(align, n);
	count(p, 1);
	return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
	next_resolve();
	int r = next.posix_memalign(out, align, n);
	if (r == 0)
		count(*out, 1);
	return r;
}

void *aligned_alloc(size_t align, size_t n)
{
	next_resolve();
	void *p = next.aligned_alloc(align, n);
	count(p, 1);
	return p;
}

void free(void *p)
{
	if (!p || next_is_early(p))
		return;
	next_resolve();
	count(p, -1);
	next.free(p);
}

__attribute__((destructor)) static void report(void)
{
	fprintf(stderr, "live_bytes: peak %ld KiB\n", peak >> 10);
}
