// SPDX-License-Identifier: MIT
/*
 * bench/live_bytes.c - the peak of a program's own live heap bytes, under
 * whatever allocator is preloaded after it (a measurement aid, not for
 * production):
 *
 *   cc -O2 -shared -fPIC -o live_bytes.so bench/live_bytes.c -ldl
 *   LD_PRELOAD="./live_bytes.so $ALLOCATOR" program...
 *
 * Counts malloc_usable_size of every block between its allocation and
 * its free (malloc, calloc, realloc, memalign, posix_memalign,
 * aligned_alloc), and prints at exit, on stderr:
 *
 *   live_bytes: peak KIB
 *
 * Usable sizes include each allocator's rounding (a few per cent of a
 * size-class allocator's), so the figure differs across allocators by
 * that much for one sequence of calls.  What it is for: programs whose
 * sequence of calls depends on timing, such as mimalloc-bench's rptestN,
 * where a thread frees what the other handed it only when it gets to it:
 * there the program's live set itself moves with the allocator's speed,
 * and so does its peak RSS (bench/README.md, "rptestN's live set").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

static long live, peak;
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void *(*next_memalign)(size_t, size_t);
static int (*next_posix_memalign)(void **, size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);
static void (*next_free)(void *);
static size_t (*next_usable)(void *);

/* dlsym may call calloc before next_calloc is known: served from here,
 * never freed to the next allocator */
static char boot[4096] __attribute__((aligned(16)));
static size_t boot_used;

static int from_boot(const void *p)
{
	return (const char *)p >= boot && (const char *)p < boot + sizeof(boot);
}

static void resolve(void)
{
	if (next_free)
		return;
	next_calloc = dlsym(RTLD_NEXT, "calloc");
	next_malloc = dlsym(RTLD_NEXT, "malloc");
	next_realloc = dlsym(RTLD_NEXT, "realloc");
	next_memalign = dlsym(RTLD_NEXT, "memalign");
	next_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	next_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	next_usable = dlsym(RTLD_NEXT, "malloc_usable_size");
	next_free = dlsym(RTLD_NEXT, "free");
}

static void count(void *p, int sign)
{
	if (!p || from_boot(p))
		return;
	long v = __atomic_add_fetch(&live, sign * (long)next_usable(p),
				    __ATOMIC_RELAXED);
	long q = __atomic_load_n(&peak, __ATOMIC_RELAXED);
	while (v > q &&
	       !__atomic_compare_exchange_n(&peak, &q, v, 0, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

void *malloc(size_t n)
{
	resolve();
	void *p = next_malloc(n);
	count(p, 1);
	return p;
}

void *calloc(size_t k, size_t n)
{
	if (!next_calloc) {
		/* only dlsym's own request, while resolve() runs */
		size_t want = (k * n + 15) & ~(size_t)15;
		if (boot_used + want > sizeof(boot))
			return NULL;
		void *p = boot + boot_used;
		boot_used += want;
		return p;
	}
	void *p = next_calloc(k, n);
	count(p, 1);
	return p;
}

void *realloc(void *old, size_t n)
{
	resolve();
	if (from_boot(old))
		return NULL;
	count(old, -1);
	void *p = next_realloc(old, n);
	if (p)
		count(p, 1);
	else if (n)
		count(old, 1); /* failed: old is still live */
	return p;
}

void *memalign(size_t align, size_t n)
{
	resolve();
	void *p = next_memalign(align, n);
	count(p, 1);
	return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
	resolve();
	int r = next_posix_memalign(out, align, n);
	if (r == 0)
		count(*out, 1);
	return r;
}

void *aligned_alloc(size_t align, size_t n)
{
	resolve();
	void *p = next_aligned_alloc(align, n);
	count(p, 1);
	return p;
}

void free(void *p)
{
	if (!p || from_boot(p))
		return;
	resolve();
	count(p, -1);
	next_free(p);
}

__attribute__((destructor)) static void report(void)
{
	fprintf(stderr, "live_bytes: peak %ld KiB\n", peak >> 10);
}
