/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/central_shard.c - which central-list shard a thread
 * refills from: how many shards a process uses (twice its CPUs, 2 ..
 * HS_CENTRAL_MAX_SHARDS) and the live threads of each; and which shards
 * are idle, so that another may adopt their partial spans (their refills
 * counted, a look's clock).  Why shards: core/central_freelist.h.
 */
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/clock.h"
#include "base/hs_common.h"
#include "core/central_freelist.h"

#define NSH HS_CENTRAL_MAX_SHARDS

/* Shards in use: twice the CPUs this process may run on (the main thread
 * is often idle next to a pool of one thread per CPU), 2 .. NSH.  0 until
 * first needed; set once (the first value published wins). */
static unsigned nshards;
/* Live threads per shard (activated caches not yet exited). */
static unsigned shard_threads[NSH];
_Static_assert(NSH <= 32, "a shard set fits in a word");

/* Refills of each shard (hs_central_shard_refilled), a line each: its
 * threads write it, no other shard's. */
static struct {
	uint64_t refills;
} __attribute__((aligned(64))) activity[NSH];
/* The count hs_central_shards_idle last saw of each shard and when it
 * first saw that count (coarse ms), written only there. */
static struct {
	uint64_t refills;
	uint32_t since;
} seen[NSH];
/* A shard is idle after this long with no refill: its threads sleep or
 * live off their caches, or it has none and no new thread took it (a
 * shard whose last thread just exited is, for a thread that starts
 * soon, the shard with the fewest threads: thread_churn took 4-6 % longer
 * when other threads emptied it at once, bench/README.md). */
#define IDLE_MS 10u

unsigned hs_central_nshards(void)
{
	unsigned n = __atomic_load_n(&nshards, __ATOMIC_ACQUIRE);
	if (HS_LIKELY(n))
		return n;
	cpu_set_t set;
	int ncpu = 0;
	/* a system call, no allocation (sysconf may read /sys via stdio) */
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		ncpu = CPU_COUNT(&set);
	unsigned want = ncpu > 0 ? 2 * (unsigned)ncpu : 2;
	if (want > NSH)
		want = NSH;
	if (__atomic_compare_exchange_n(&nshards, &n, want, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return want;
	return n; /* another thread published first */
}

unsigned hs_central_shard_get(void)
{
	unsigned n = hs_central_nshards();
	/* racy minimum: two threads starting together may pick the same
	 * shard, which is only slower, never wrong */
	unsigned best = 0, best_count = ~0u;
	for (unsigned i = 0; i < n; i++) {
		unsigned c =
			__atomic_load_n(&shard_threads[i], __ATOMIC_RELAXED);
		if (c < best_count) {
			best = i;
			best_count = c;
		}
	}
	__atomic_fetch_add(&shard_threads[best], 1, __ATOMIC_RELAXED);
	return best;
}

bool hs_central_shard_put(unsigned shard)
{
	if (shard >= NSH)
		return false;
	/* saturating: a fork child starts again from zero counts */
	unsigned c = __atomic_load_n(&shard_threads[shard], __ATOMIC_RELAXED);
	while (c && !__atomic_compare_exchange_n(&shard_threads[shard], &c,
						 c - 1, true, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
		;
	return c == 1;
}

void hs_central_shard_refilled(unsigned shard)
{
	/* a load and a store, not a locked add: two threads of the shard
	 * may lose one count, the count still moves */
	uint64_t *r = &activity[shard].refills;
	__atomic_store_n(r, __atomic_load_n(r, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}

uint32_t hs_central_shards_idle(void)
{
	uint32_t idle = 0, now = hs_clock_coarse_ms();
	unsigned n = hs_central_nshards();
	for (unsigned sh = 0; sh < n; sh++) {
		uint64_t r = __atomic_load_n(&activity[sh].refills,
					     __ATOMIC_RELAXED);
		/* never refilled: no span was ever on its lists (adoption
		 * moves spans only into a shard that is refilling) */
		if (!r)
			continue;
		/* two lookers may tear the pair: one wrong answer, racy
		 * by design (central_freelist.h) */
		if (__atomic_load_n(&seen[sh].refills, __ATOMIC_RELAXED) != r) {
			__atomic_store_n(&seen[sh].refills, r,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&seen[sh].since, now,
					 __ATOMIC_RELAXED);
		} else if (now - __atomic_load_n(&seen[sh].since,
						 __ATOMIC_RELAXED) >=
			   IDLE_MS) {
			idle |= 1u << sh;
		}
	}
	return idle;
}

void hs_central_shard_reinit(void)
{
	/* the child has one thread: the parent's counts mean nothing */
	for (unsigned sh = 0; sh < NSH; sh++)
		shard_threads[sh] = 0;
}
