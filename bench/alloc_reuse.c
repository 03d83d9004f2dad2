// SPDX-License-Identifier: MIT
/*
 * bench/alloc_reuse.c - a preload library that counts, for any allocator
 * preloaded after it, where the memory it hands out was before:
 *  - calloc bytes on 4 KiB pages no allocation had covered before (the
 *    most a calloc that skips the memset on fresh memory could skip:
 *    heapscope's calloc knows this for large blocks only);
 *  - bytes (of every allocation) on 4 KiB pages last handed out to
 *    another thread (a cache line another core wrote: what a cold-cache
 *    benchmark such as rptest pays for in cross-core transfers; the
 *    owner-return designs, mimalloc's, keep it low).
 * Pages are keyed by address in an open-addressing table (2^22 pages =
 * 16 GiB of distinct memory; beyond that the counts stop and say so).
 * A count per allocation page by page, under one mutex: the program runs
 * several times slower, so this measures placement, never time.
 * Counted: malloc, calloc, realloc (when it moves), memalign,
 * posix_memalign, aligned_alloc, C++ operator new and new[].
 * The figures go to stderr at exit, one line prefixed "alloc_reuse:".
 *
 * LD_PRELOAD="alloc_reuse.so liballocator.so" program ...
 * (bench/alloc_reuse.sh builds it and runs a command under each allocator).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "next_alloc.h"

#define TAB_BITS 22
#define TAB_N ((size_t)1 << TAB_BITS)

static uintptr_t *tab_key;  /* page number + 1, 0 = empty */
static uint16_t *tab_owner; /* thread that last got memory on the page */
static int tab_full;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint16_t next_thread = 1;
static __thread uint16_t me;

static unsigned long long calloc_calls, calloc_bytes, calloc_fresh;
static unsigned long long all_bytes, other_thread_bytes;

/* Records [p, p + n) as handed to this thread; returns its bytes on
 * pages never handed out before.  Caller holds mu. */
static size_t note_locked(const void *p, size_t n)
{
	if (!tab_key) {
		tab_key = mmap(
			NULL, TAB_N * sizeof(*tab_key), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		tab_owner = mmap(NULL, TAB_N * sizeof(*tab_owner),
				 PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
		if (tab_key == MAP_FAILED || tab_owner == MAP_FAILED) {
			tab_key = NULL;
			tab_full = 1;
		}
	}
	if (tab_full)
		return 0;
	if (!me)
		me = next_thread++;
	uintptr_t a = (uintptr_t)p, e = a + n;
	size_t fresh = 0;
	all_bytes += n;
	for (uintptr_t pg = a >> 12; pg <= (e - 1) >> 12; pg++) {
		uintptr_t lo = pg << 12 > a ? pg << 12 : a;
		uintptr_t hi = (pg + 1) << 12 < e ? (pg + 1) << 12 : e;
		uintptr_t k = pg + 1;
		size_t h = (size_t)((k * 0x9e3779b97f4a7c15ull) >>
				    (64 - TAB_BITS));
		size_t probes = 0;
		while (tab_key[h] && tab_key[h] != k && probes++ < TAB_N / 2)
			h = (h + 1) & (TAB_N - 1);
		if (probes >= TAB_N / 2) {
			tab_full = 1;
			return fresh;
		}
		if (!tab_key[h]) {
			tab_key[h] = k;
			fresh += hi - lo;
		} else if (tab_owner[h] != me) {
			other_thread_bytes += hi - lo;
		}
		tab_owner[h] = me;
	}
	return fresh;
}

static void note(const void *p, size_t n, int is_calloc)
{
	if (!p || !n)
		return;
	pthread_mutex_lock(&mu);
	size_t fresh = note_locked(p, n);
	if (is_calloc) {
		calloc_calls++;
		calloc_bytes += n;
		calloc_fresh += fresh;
	}
	pthread_mutex_unlock(&mu);
}

void *malloc(size_t n)
{
	next_resolve();
	if (!next.malloc)
		return next_early_alloc(n);
	void *p = next.malloc(n);
	note(p, n, 0);
	return p;
}

void *calloc(size_t c, size_t s)
{
	next_resolve();
	size_t n;
	if (__builtin_mul_overflow(c, s, &n))
		n = SIZE_MAX;
	if (!next.calloc) /* the static buffer is zero */
		return n == SIZE_MAX ? NULL : next_early_alloc(n);
	void *p = next.calloc(c, s);
	note(p, n, 1);
	return p;
}

void free(void *p)
{
	if (next_is_early(p))
		return;
	next_resolve();
	next.free(p);
}

void *realloc(void *old, size_t n)
{
	next_resolve();
	if (next_is_early(old)) {
		/* an early block's size is unknown: copy what can be there */
		size_t room =
			(size_t)(next_early + sizeof(next_early) - (char *)old);
		void *p = malloc(n);
		if (p)
			memcpy(p, old, n < room ? n : room);
		return p;
	}
	void *p = next.realloc(old, n);
	if (p != old)
		note(p, n, 0);
	return p;
}

void *memalign(size_t align, size_t n)
{
	next_resolve();
	void *p = next.memalign(align, n);
	note(p, n, 0);
	return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
	next_resolve();
	int r = next.posix_memalign(out, align, n);
	if (r == 0)
		note(*out, n, 0);
	return r;
}

void *aligned_alloc(size_t align, size_t n)
{
	next_resolve();
	void *p = next.aligned_alloc(align, n);
	note(p, n, 0);
	return p;
}

/* C++ operator new / new[] (allocators that export their own, heapscope,
 * mimalloc and tcmalloc do, are reached past malloc): counted when the
 * program links libstdc++ (RTLD_NEXT finds them); deletes pass through
 * unwrapped.  Mangled names: a C file declares them by hand. */
void *_Znwm(size_t n);
void *_Znam(size_t n);

void *_Znwm(size_t n)
{
	next_resolve();
	void *p = next.new_(n);
	note(p, n, 0);
	return p;
}

void *_Znam(size_t n)
{
	next_resolve();
	void *p = next.new_array(n);
	note(p, n, 0);
	return p;
}

__attribute__((destructor)) static void report(void)
{
	char b[512];
	pthread_mutex_lock(&mu);
	int l = snprintf(
		b, sizeof(b),
		"alloc_reuse: calloc calls %llu bytes %llu on never-used "
		"pages %llu (%.2f %%); all bytes %llu on pages last handed "
		"to another thread %llu (%.2f %%)%s\n",
		calloc_calls, calloc_bytes, calloc_fresh,
		100.0 * (double)calloc_fresh /
			(double)(calloc_bytes ? calloc_bytes : 1),
		all_bytes, other_thread_bytes,
		100.0 * (double)other_thread_bytes /
			(double)(all_bytes ? all_bytes : 1),
		tab_full ? " (page table full: counts stop early)" : "");
	pthread_mutex_unlock(&mu);
	if (l > 0 && write(2, b, (size_t)l) < 0)
		return;
}
