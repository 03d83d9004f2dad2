// SPDX-License-Identifier: MIT
/*
 * symbolize_cache.c - the cross-process symbol cache: the chain of an
 * address (its inlined calls and function, with source lines) by (build
 * id, offset in the object), shared by every struct hs_syms, and its
 * counters (hs_syms__cache_stats).
 */
#include <elfutils/libdwfl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize_internal.h"

/*
 * Symbols shared by every process (the daemon follows many processes that
 * map the same libc, the same binary): keyed by the object's build id and
 * the offset of the address in it, so a second process does not read the
 * same symbol tables and DWARF again.  Bounded; thread-safe (the daemon
 * symbolizes different processes from different threads).  Entries live
 * until exit.
 */
#define GCACHE_MAX (1u << 20)

static struct {
	pthread_mutex_t lock;
	struct gent *e;
	size_t cap, used;
	uint64_t hits, misses;
} gcache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t gkey_hash(uint64_t bid, uint64_t off)
{
	uint64_t x = bid ^ (off * 0x9e3779b97f4a7c15ULL);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 29);
}

/* Hash of mod's build id (0 without one) and its start address. */
uint64_t module_bid(Dwfl_Module *mod, Dwarf_Addr *start)
{
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	uint64_t h = 1469598103934665603ULL;
	int n;

	*start = 0;
	if (!dwfl_module_info(mod, NULL, start, NULL, NULL, NULL, NULL, NULL))
		return 0;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0 || !bits)
		return 0;
	for (int i = 0; i < n; i++)
		h = (h ^ bits[i]) * 1099511628211ULL;
	return h ? h : 1;
}

struct hs_chain *gcache_get(uint64_t bid, uint64_t off)
{
	struct hs_chain *c = NULL;

	if (!bid)
		return NULL;
	pthread_mutex_lock(&gcache.lock);
	if (gcache.cap) {
		size_t mask = gcache.cap - 1;

		for (size_t i = gkey_hash(bid, off) & mask; gcache.e[i].bid;
		     i = (i + 1) & mask) {
			if (gcache.e[i].bid == bid && gcache.e[i].off == off) {
				c = gcache.e[i].c;
				break;
			}
		}
	}
	if (c)
		gcache.hits++;
	else
		gcache.misses++;
	pthread_mutex_unlock(&gcache.lock);
	return c;
}

struct hs_chain *gcache_put(uint64_t bid, uint64_t off, struct hs_chain *c)
{
	struct hs_chain *out = NULL;
	size_t mask, i;

	if (!bid || !c)
		return NULL;
	pthread_mutex_lock(&gcache.lock);
	if (gcache.used >= GCACHE_MAX)
		goto out;
	if ((gcache.used + 1) * 4 > gcache.cap * 3) {
		size_t ncap = gcache.cap ? gcache.cap * 2 : 4096;
		struct gent *ne = calloc(ncap, sizeof(*ne));

		if (!ne)
			goto out;
		for (size_t j = 0; j < gcache.cap; j++) {
			if (!gcache.e[j].bid)
				continue;
			for (i = gkey_hash(gcache.e[j].bid, gcache.e[j].off) &
				 (ncap - 1);
			     ne[i].bid; i = (i + 1) & (ncap - 1))
				;
			ne[i] = gcache.e[j];
		}
		free(gcache.e);
		gcache.e = ne;
		gcache.cap = ncap;
	}
	mask = gcache.cap - 1;
	for (i = gkey_hash(bid, off) & mask; gcache.e[i].bid;
	     i = (i + 1) & mask) {
		if (gcache.e[i].bid == bid && gcache.e[i].off == off) {
			/* another thread was first */
			out = gcache.e[i].c;
			chain_free(c);
			goto out;
		}
	}
	gcache.e[i] = (struct gent){bid, off, c};
	gcache.used++;
	out = c;
out:
	pthread_mutex_unlock(&gcache.lock);
	return out;
}

void hs_syms__cache_stats(uint64_t *hits, uint64_t *misses, size_t *entries)
{
	pthread_mutex_lock(&gcache.lock);
	*hits = gcache.hits;
	*misses = gcache.misses;
	*entries = gcache.used;
	pthread_mutex_unlock(&gcache.lock);
}
