/* SPDX-License-Identifier: MIT */
/*
 * bench/next_alloc.h - for the measuring shims preloaded before an
 * allocator (bench/alloc_reuse.c, bench/live_bytes.c): that allocator's
 * functions, found with dlsym(RTLD_NEXT) on first use, and a static buffer
 * for what dlsym itself allocates while they are being found.
 *
 * The includer defines _GNU_SOURCE (RTLD_NEXT) before any header.
 * Static state: one shim per shared object includes it.  next_resolve is
 * not thread-safe before its first call returns; a shim's first call
 * comes from the process's first thread (ld.so's own work and the
 * constructors run before the program can start another).
 */
#ifndef BENCH_NEXT_ALLOC_H
#define BENCH_NEXT_ALLOC_H

#include <dlfcn.h>
#include <stddef.h>

struct next_alloc {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void (*free)(void *);
	size_t (*usable_size)(void *);
	void *(*new_)(size_t);	    /* C++ operator new (_Znwm), or NULL */
	void *(*new_array)(size_t); /* operator new[] (_Znam), or NULL */
};

static struct next_alloc next;
/* volatile: glibc declares dlsym a leaf (__THROW), so without it the
 * compiler may drop the store of 1 as dead, and dlsym's own malloc (its
 * error path: glibc has no _Znwm) would resolve again, without end */
static volatile int next_resolving;
static char next_early[1 << 16] __attribute__((aligned(16)));
static size_t next_early_used;

/* n bytes of the static buffer (zeroed, as it is never reused), 16-byte
 * aligned; NULL once it is used up.  For the requests made while
 * next_resolve runs: they are never freed to the next allocator. */
static void *next_early_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n > sizeof(next_early) - next_early_used)
		return NULL;
	void *p = next_early + next_early_used;
	next_early_used += n;
	return p;
}

/* Whether p came from next_early_alloc. */
static int next_is_early(const void *p)
{
	return (const char *)p >= next_early &&
	       (const char *)p < next_early + sizeof(next_early);
}

/* Finds the next allocator's functions, once.  next.malloc is set last:
 * while it is NULL, a shim's malloc and calloc serve from the buffer. */
static void next_resolve(void)
{
	if (next.malloc || next_resolving)
		return;
	next_resolving = 1;
	next.calloc = dlsym(RTLD_NEXT, "calloc");
	next.free = dlsym(RTLD_NEXT, "free");
	next.realloc = dlsym(RTLD_NEXT, "realloc");
	next.memalign = dlsym(RTLD_NEXT, "memalign");
	next.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	next.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	next.usable_size = dlsym(RTLD_NEXT, "malloc_usable_size");
	next.new_ = dlsym(RTLD_NEXT, "_Znwm");
	next.new_array = dlsym(RTLD_NEXT, "_Znam");
	next.malloc = dlsym(RTLD_NEXT, "malloc");
	next_resolving = 0;
}

#endif /* BENCH_NEXT_ALLOC_H */
