// SPDX-License-Identifier: MIT
/*
 * tests/test_sampled_concurrency.c - many threads sampling, freeing
 * (their own blocks and each other's), growing with realloc and taking
 * heap snapshots while readers check the registry as a collector reads
 * it, through the real library (linked).  Run with
 * HEAPSCOPE_SAMPLE_RATE=1 (every allocation sampled, so every malloc and
 * free takes the region lock).
 *
 * What it holds the allocator to:
 *  - a record whose seq reads the same before and after its copy is a
 *    whole record of a live sample (registry.c's protocol): its pointer
 *    starts a page of the region, its run holds its size, its stack fits;
 *  - between two equal even generations, the records in use are the
 *    header's live count and their pages its sampled_bytes;
 *  - no two live blocks share bytes (each carries its owner's pattern,
 *    checked before it is freed, by whichever thread frees it);
 *  - once the threads are done, the statistics, which are added after
 *    the region lock is released (sampling/sample.h struct
 *    hs_sample_acct), agree with the registry: live, samples - frees,
 *    and the in-use estimate summed here from the records' own fields;
 *  - the page runs pass their checker (heapscope_sampled_check).
 * The region lock itself (region/lock.c) has its own test,
 * test_region_lock.c.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sampled_util.h"

#define PAGE 8192u
#define WORKERS 8
#define READERS 2
#define ITERS 12000
#define SHARED 64 /* blocks handed between threads */
#define KEEP 16	  /* blocks each worker keeps for a while */

/* A block's pattern: its size and an owner tag, at both ends (blocks of
 * at least sizeof(struct hdr) + 8 bytes, so the two do not overlap). */
struct hdr {
	uint64_t size, tag;
};

static void *shared[SHARED];
static volatile int stop;
static uint64_t failures;

static void bad(const char *what, uint64_t v)
{
	if (__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED) < 8)
		fprintf(stderr, "test_sampled_concurrency: %s (%llu)\n", what,
			(unsigned long long)v);
}

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/* Sizes: mostly small (with proxies), some of a few pages, a few large
 * blocks (over 256 KiB: the region's large-block path when not sampled,
 * a multi-page sample here). */
static size_t pick_size(uint64_t *x)
{
	uint64_t r = lcg(x);

	if (r % 64 == 0)
		return 256 * 1024 + r % (512 * 1024);
	if (r % 8 == 0)
		return 4097 + r % 60000;
	return sizeof(struct hdr) + sizeof(uint64_t) + r % 4000;
}

static void *make(size_t n, uint64_t tag)
{
	struct hdr *h = malloc(n);

	if (!h)
		return NULL;
	h->size = n;
	h->tag = tag;
	memcpy((char *)h + n - sizeof(tag), &tag, sizeof(tag));
	return h;
}

static void check_block(const struct hdr *h)
{
	uint64_t end;

	memcpy(&end, (const char *)h + h->size - sizeof(end), sizeof(end));
	if (end != h->tag)
		bad("a live block's bytes were overwritten", h->tag);
}

static void drop(void *p)
{
	if (!p)
		return;
	check_block(p);
	free(p);
}

static void *worker_main(void *arg)
{
	uint64_t id = (uintptr_t)arg, x = id * 0x9e3779b97f4a7c15ull + 1;
	void *keep[KEEP] = {0};

	for (uint64_t i = 0; i < ITERS; i++) {
		uint64_t tag = id << 32 | i, r = lcg(&x);
		void *p = make(pick_size(&x), tag);

		if (!p) {
			bad("malloc failed", i);
			break;
		}
		if (r % 16 == 0) {
			/* grow: the same bytes, a new sample (sample.c grow) */
			struct hdr *h = p;
			size_t n = h->size + 1 + lcg(&x) % 20000;

			check_block(h);
			h = realloc(h, n);
			if (!h) {
				bad("realloc failed", n);
				break;
			}
			h->size = n;
			memcpy((char *)h + n - sizeof(tag), &tag, sizeof(tag));
			p = h;
		}
		if (r % 3 == 0) {
			/* the other threads free it */
			drop(__atomic_exchange_n(&shared[r % SHARED], p,
						 __ATOMIC_ACQ_REL));
		} else {
			unsigned k = (unsigned)(r >> 8) % KEEP;

			drop(keep[k]);
			keep[k] = p;
		}
	}
	for (unsigned k = 0; k < KEEP; k++)
		drop(keep[k]);
	return NULL;
}

/* The registry as a collector reads it, over and over. */
static void *reader_main(void *arg)
{
	const struct heapscope_record *r = records();
	uint64_t windows = 0, checked = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		uint64_t g0 =
			__atomic_load_n(&REG->generation, __ATOMIC_ACQUIRE);
		uint64_t hw =
			__atomic_load_n(&REG->high_water, __ATOMIC_ACQUIRE);
		uint64_t live = __atomic_load_n(&REG->live, __ATOMIC_RELAXED);
		uint64_t bytes =
			__atomic_load_n(&REG->sampled_bytes, __ATOMIC_RELAXED);
		uint64_t n = 0, sum = 0;

		for (uint64_t i = 0; i < hw; i++) {
			uint64_t s1 =
				__atomic_load_n(&r[i].seq, __ATOMIC_ACQUIRE);
			struct heapscope_record c;

			if (!s1)
				continue;
			memcpy(&c, &r[i], sizeof(c));
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (__atomic_load_n(&r[i].seq, __ATOMIC_RELAXED) != s1)
				continue; /* changed while copied */
			n++;
			sum += c.span_bytes;
			checked++;
			if (!in_region((void *)(uintptr_t)c.ptr) ||
			    (c.ptr - REG->region_start) % PAGE ||
			    c.span_start != c.ptr)
				bad("record's pointer does not start a page",
				    c.ptr);
			if (c.allocated < c.requested ||
			    c.span_bytes < c.allocated || c.span_bytes % PAGE ||
			    c.weight == 0)
				bad("record's sizes do not fit", c.span_bytes);
			if (c.depth > REG->max_frames || c.tid == 0)
				bad("record's stack or thread", c.depth);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if ((g0 & 1) ||
		    __atomic_load_n(&REG->generation, __ATOMIC_RELAXED) != g0)
			continue;
		/* a stable window: the set is the header's */
		windows++;
		if (n != live)
			bad("records in use != live in a stable window", n);
		if (sum != bytes)
			bad("pages of records != sampled_bytes in a stable "
			    "window",
			    sum);
	}
	print_message("reader: %llu records checked, %llu stable windows\n",
		      (unsigned long long)checked, (unsigned long long)windows);
	if (checked == 0)
		bad("the reader saw no record", 0);
	return NULL;
}

/* Long holds of the region lock (a snapshot walks every record under
 * it): the waiters' sleeping path. */
static void *snapshot_main(void *arg)
{
	uint64_t n = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		struct heapscope_profile *p = NULL;

		if (heapscope_heap_profile(&p) != 0 || !p) {
			bad("heapscope_heap_profile failed", n);
			break;
		}
		heapscope_profile_free(p);
		n++;
	}
	print_message("snapshots: %llu\n", (unsigned long long)n);
	return NULL;
}

/* Sum over the live records of a * W / (r + 1), as the sampler's
 * estimate defines it (DESIGN.md section 1). */
static uint64_t inuse_from_records(uint64_t *live)
{
	const struct heapscope_record *r = records();
	uint64_t sum = 0;

	*live = 0;
	for (uint64_t i = 0; i < REG->high_water; i++) {
		if (!r[i].seq)
			continue;
		(*live)++;
		sum += (uint64_t)((unsigned __int128)r[i].weight *
				  r[i].allocated / (r[i].requested + 1));
	}
	return sum;
}

static void test_many_threads(void **state)
{
	pthread_t w[WORKERS], rd[READERS], snap;
	struct heapscope_sampling_stats st;
	uint64_t live, inuse;

	(void)state;
	if (REG->sample_period != 1)
		skip(); /* the test wants every allocation sampled */
	for (int i = 0; i < READERS; i++)
		assert_int_equal(
			pthread_create(&rd[i], NULL, reader_main, NULL), 0);
	assert_int_equal(pthread_create(&snap, NULL, snapshot_main, NULL), 0);
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&w[i], NULL, worker_main,
						(void *)(uintptr_t)(i + 1)),
				 0);
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_join(w[i], NULL), 0);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < READERS; i++)
		assert_int_equal(pthread_join(rd[i], NULL), 0);
	assert_int_equal(pthread_join(snap, NULL), 0);
	for (int i = 0; i < SHARED; i++)
		drop(shared[i]);
	assert_int_equal(failures, 0);

	/* quiescent: the statistics agree with the registry */
	assert_int_equal(REG->generation % 2, 0);
	inuse = inuse_from_records(&live);
	assert_int_equal(heapscope_get_sampling_stats(&st, sizeof(st)), 0);
	assert_int_equal(live, REG->live);
	assert_int_equal(st.live, live);
	assert_int_equal(st.samples_total - st.frees_total, live);
	assert_int_equal(st.inuse_estimate, inuse);
	assert_int_equal(st.invalid_frees_total, 0);
	assert_int_equal(st.mismatched_frees_total, 0);
	assert_true(st.samples_total >= (uint64_t)WORKERS * ITERS);
	assert_int_equal(heapscope_sampled_check(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
