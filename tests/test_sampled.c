// SPDX-License-Identifier: MIT
/*
 * tests/test_sampled.c - the sampled region, page runs, registry, stacks
 * and the in-process API, through the real library (linked, so this
 * program's malloc is heapscope's).  Run with HEAPSCOPE_SAMPLE_RATE=1:
 * every allocation is sampled.
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "sampled_util.h"

#define PAGE 8192u

/* HEAPSCOPE_PROXY_MAX as the library reads it (plain bytes or a K
 * suffix here); default 4096. */
static uint64_t proxy_max(void)
{
	const char *e = getenv("HEAPSCOPE_PROXY_MAX");
	char *end;
	uint64_t v;

	if (!e)
		return 4096;
	v = strtoull(e, &end, 10);
	if (*end == 'K' || *end == 'k')
		v <<= 10;
	return v;
}

/* Does a sample of r requested, a usable bytes hold a proxy? */
static int expect_proxy(size_t r, size_t a)
{
	return r <= 256 * 1024 && a <= 256 * 1024 && a <= proxy_max();
}

static uint64_t count_live_records(void)
{
	struct heapscope_record *r = records();
	uint64_t n = 0;

	for (uint64_t i = 0; i < REG->high_water; i++)
		n += r[i].seq != 0;
	return n;
}

static int maps_lines(void)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	assert_non_null(f);
	while (fgets(buf, sizeof(buf), f))
		n += strchr(buf, '\n') != NULL;
	fclose(f);
	return n;
}

/*
 * heapscope_collector_attached() is 0 or 1 whatever runs on the host; it
 * must be 0 and 1 exactly where the test runner knows: HS_EXPECT_COLLECTOR
 * =0 from tests/run_unfollowed.sh (this process maps a private copy of the
 * library, HS_UNFOLLOWED_LIB, that no daemon follows: checked here in
 * /proc/self/maps) and =1 from tests/test_under_daemon.sh (a daemon
 * attached to the library before this process started).  Unset (other
 * runs of this program): no claim, a host daemon may be attached.
 */
static void check_collector_attached(void)
{
	const char *want = getenv("HS_EXPECT_COLLECTOR");
	const char *copy = getenv("HS_UNFOLLOWED_LIB");
	int attached = heapscope_collector_attached();

	assert_true(attached == 0 || attached == 1);
	if (!want)
		return;
	if (want[0] == '0') {
		char line[4096];
		int found = 0;
		FILE *f = fopen("/proc/self/maps", "r");

		assert_non_null(copy);
		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			found |= strstr(line, " /") &&
				 strcmp(strstr(line, " /") + 1, copy) == 0;
		}
		fclose(f);
		assert_true(found);
	}
	assert_int_equal(attached, want[0] == '1');
}

static void test_header(void **state)
{
	(void)state;
	assert_true(REG->magic == HEAPSCOPE_REGISTRY_MAGIC);
	assert_int_equal(REG->version, HEAPSCOPE_REGISTRY_VERSION);
	assert_int_equal(REG->header_size, sizeof(struct heapscope_registry));
	assert_int_equal(REG->record_size, sizeof(struct heapscope_record));
	assert_int_equal(REG->max_frames, HEAPSCOPE_MAX_FRAMES);
	assert_true(REG->records != 0 && REG->capacity >= 100000);
	assert_true(REG->region_size >= ((uint64_t)1 << 30));
	assert_int_equal(REG->sample_period, 1);
	assert_int_equal(heapscope_get_sample_period(), 1);
	assert_int_equal(REG->generation % 2, 0);
	check_collector_attached();
}

/* Every allocation sampled, page-exclusive, usable size = record's a. */
static void test_every_alloc_sampled(void **state)
{
	static const size_t sizes[] = { 0,     1,      8,      15,     16,
					100,   1000,   4096,   8191,   8192,
					8193,  65536,  100000, 262144, 262145,
					300000, 1 << 20, 3 << 20 };
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	void *p[N];

	(void)state;
	for (int i = 0; i < N; i++) {
		const struct heapscope_record *rec;

		p[i] = malloc(sizes[i]);
		assert_non_null(p[i]);
		assert_true(in_region(p[i]));
		assert_int_equal((uintptr_t)p[i] % PAGE, 0);
		rec = find_record(p[i]);
		assert_non_null(rec);
		assert_int_equal(rec->requested, sizes[i]);
		assert_int_equal(rec->weight, sizes[i] + 1); /* T = 1 */
		assert_true(rec->allocated >= sizes[i]);
		assert_int_equal(malloc_usable_size(p[i]), rec->allocated);
		assert_int_equal(rec->span_start, (uintptr_t)p[i]);
		assert_int_equal(rec->span_bytes % PAGE, 0);
		assert_true(rec->span_bytes >= rec->allocated);
		assert_true(rec->span_bytes < rec->allocated + PAGE);
		assert_true((rec->proxy != 0) ==
			    expect_proxy(sizes[i], rec->allocated));
		memset(p[i], 0xab, malloc_usable_size(p[i]));
	}
	/* no two samples share a page */
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			const struct heapscope_record *a = find_record(p[i]);

			if (i != j)
				assert_true((uintptr_t)p[j] < a->span_start ||
					    (uintptr_t)p[j] >= a->span_start + a->span_bytes);
		}
	for (int i = 0; i < N; i++)
		free(p[i]);
	assert_int_equal(heapscope_sampled_check(), 0);
}

static void test_calloc_realloc_aligned(void **state)
{
	static const size_t aligns[] = { 16, 64, 4096, 8192, 65536, 1 << 21,
					 1 << 30 };
	void *p, *q;

	(void)state;
	p = calloc(1000, 8);
	assert_true(in_region(p));
	for (int i = 0; i < 8000; i++)
		assert_int_equal(((unsigned char *)p)[i], 0);
	memset(p, 7, 8000);
	q = realloc(p, 100000);
	assert_true(in_region(q));
	for (int i = 0; i < 8000; i++)
		assert_int_equal(((unsigned char *)q)[i], 7);
	free(q);

	for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
		void *a = NULL;

		assert_int_equal(posix_memalign(&a, aligns[i], 100), 0);
		assert_true(in_region(a));
		assert_int_equal((uintptr_t)a % aligns[i], 0);
		/* the core passes 0 for the default alignment */
		assert_true(find_record(a)->alignment == aligns[i] ||
			    (aligns[i] <= 16 && find_record(a)->alignment == 0));
		memset(a, 1, 100);
		free(a);
	}
	assert_int_equal(heapscope_sampled_check(), 0);
}

static void test_free_reuse_and_registry(void **state)
{
	uint64_t live0 = REG->live, seq0;
	const struct heapscope_record *rec;
	void *p, *q;

	(void)state;
	assert_int_equal(count_live_records(), live0);
	p = malloc(200);
	rec = find_record(p);
	assert_non_null(rec);
	seq0 = rec->seq;
	assert_true(seq0 > 0 && seq0 < REG->next_seq);
	assert_int_equal(REG->live, live0 + 1);
	assert_int_equal(count_live_records(), live0 + 1);
	free(p);
	assert_null(find_record(p));
	assert_int_equal(REG->live, live0);
	assert_int_equal(count_live_records(), live0);
	/* the pages come back: a same-sized request reuses them */
	q = malloc(200);
	assert_ptr_equal(q, p);
	assert_true(find_record(q)->seq > seq0 + 1); /* the free took a seq */
	free(q);
	assert_int_equal(REG->generation % 2, 0);
}

static void test_invalid_frees(void **state)
{
	struct heapscope_sampling_stats st0 = stats();
	void *volatile p = malloc(100);
	void *volatile interior = (char *)p + 16;
	/* the region's last page never starts a sample in this test */
	void *volatile next_page =
		(void *)(uintptr_t)(REG->region_start + REG->region_size - PAGE);

	(void)state;
	free(interior);  /* interior of a live sample */
	free(next_page); /* a page that starts no sample */
	assert_non_null(find_record(p));
	assert_int_equal(stats().invalid_frees_total, st0.invalid_frees_total + 2);
	free(p);
	free(p); /* double free: reported, ignored */
	assert_int_equal(stats().invalid_frees_total, st0.invalid_frees_total + 3);
	assert_int_equal(stats().live, st0.live);
	assert_int_equal(heapscope_sampled_check(), 0);
}

static void test_stats_fragmentation(void **state)
{
	struct heapscope_sampling_stats a = stats(), b;
	void *p = malloc(100);
	size_t u = malloc_usable_size(p);

	(void)state;
	b = stats();
	/* T = 1: W = r + 1, count estimate 1 */
	assert_int_equal(b.samples_total, a.samples_total + 1);
	assert_int_equal(b.live, a.live + 1);
	assert_int_equal(b.fragmentation_estimate - a.fragmentation_estimate, u - 100);
	assert_int_equal(b.inuse_estimate - a.inuse_estimate, u);
	assert_int_equal(b.pages_bytes - a.pages_bytes, PAGE);
	assert_int_equal(b.proxy_bytes - a.proxy_bytes,
			 expect_proxy(100, u) ? u : 0);
	assert_int_equal(REG->sampled_bytes, b.pages_bytes);
	free(p);
	b = stats();
	assert_int_equal(b.frees_total, a.frees_total + 1);
	assert_int_equal(b.fragmentation_estimate, a.fragmentation_estimate);
	assert_int_equal(b.pages_bytes, a.pages_bytes);
}

/* Samples hold a proxy exactly when their allocated size is at most
 * HEAPSCOPE_PROXY_MAX (small classes only): the records say so, each
 * proxy is a normal-heap object of the sample's size class, and the
 * proxy bytes in the statistics are exactly the sum the test expects
 * from the sizes it allocated (a fixed list around the threshold plus
 * 400 log-uniform sizes from 1 B to 512 KiB, fixed seed; T = 1). */
static void test_proxy_threshold(void **state)
{
	enum { EDGE = 14, RAND = 400, N = EDGE + RAND };
	static const size_t edge[EDGE] = { 0,    16,   255,  2048, 3584,
					   4095, 4096, 4097, 5000, 8192,
					   65536, 262144, 262145, 600000 };
	struct heapscope_sampling_stats a, b;
	uint64_t want = 0, x = 0x9e3779b97f4a7c15ull, with = 0, without = 0;
	size_t *sizes = calloc(N, sizeof(*sizes));
	void **p = calloc(N, sizeof(*p));

	(void)state;
	assert_non_null(sizes);
	assert_non_null(p);
	for (int i = 0; i < N; i++) {
		if (i < EDGE) {
			sizes[i] = edge[i];
		} else {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* 2^(19 u), u uniform in [0, 1): 1 B .. 512 KiB */
			sizes[i] = (size_t)exp2(19.0 * (double)(x >> 11) /
						9007199254740992.0);
		}
	}
	a = stats(); /* after the arrays: T = 1 samples them too */
	for (int i = 0; i < N; i++) {
		const struct heapscope_record *rec;
		size_t u;

		p[i] = malloc(sizes[i]);
		assert_non_null(p[i]);
		assert_true(in_region(p[i]));
		rec = find_record(p[i]);
		assert_non_null(rec);
		u = malloc_usable_size(p[i]);
		assert_int_equal(rec->allocated, u);
		if (expect_proxy(sizes[i], u)) {
			void *q = (void *)(uintptr_t)rec->proxy;

			assert_non_null(q);
			assert_false(in_region(q));
			/* the object the size class would have given */
			assert_int_equal(malloc_usable_size(q), u);
			want += u;
			with++;
		} else {
			assert_int_equal(rec->proxy, 0);
			without++;
		}
	}
	b = stats();
	assert_int_equal(b.live - a.live, N);
	assert_int_equal(b.proxy_bytes - a.proxy_bytes, want);
	/* the mix must test both sides unless proxies are off */
	assert_true(without > 0);
	assert_true(with > 0 || proxy_max() == 0);
	print_message("proxy max %llu: %llu samples with a proxy (%llu bytes), "
		      "%llu without\n",
		      (unsigned long long)proxy_max(),
		      (unsigned long long)with, (unsigned long long)want,
		      (unsigned long long)without);
	for (int i = 0; i < N; i++)
		free(p[i]);
	b = stats();
	assert_int_equal(b.proxy_bytes, a.proxy_bytes);
	assert_int_equal(b.live, a.live);
	assert_int_equal(heapscope_sampled_check(), 0);
	free(sizes);
	free(p);
}

/* Write every byte of [p, p + n) (volatile: not a dead store before free). */
static void touch(char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((volatile char *)p)[i] = 1;
}

/* 4 KiB pages of [p, p + n) that are resident (mincore).  Not inlined:
 * the callers ask about freed sampled pages on purpose, which gcc -O3
 * would otherwise report as a use after free. */
static __attribute__((noinline)) size_t resident_pages(uintptr_t p, size_t n)
{
	unsigned char vec[1024];
	size_t os = (size_t)sysconf(_SC_PAGESIZE), np = (n + os - 1) / os, r = 0;

	assert_true(np <= sizeof(vec));
	assert_int_equal(mincore((void *)p, n, vec), 0);
	for (size_t i = 0; i < np; i++)
		r += vec[i] & 1;
	return r;
}

/* Freed sampled pages stay committed (cache) and the next sample of a
 * size that fits gets them back: same address, resident before it is
 * touched, counted as recycled; malloc_trim decommits the cache. */
static void test_page_cache(void **state)
{
	const size_t n = 64 * 1024, os = (size_t)sysconf(_SC_PAGESIZE);
	struct heapscope_sampling_stats a, b;
	char *p, *q, *keep;
	uintptr_t pa;

	(void)state;
	malloc_trim(0);
	a = stats();
	assert_int_equal(a.cached_bytes, 0);
	assert_int_equal(REG->cached_bytes, 0);
	p = malloc(n);
	keep = malloc(100); /* a live neighbour: p cannot merge rightwards */
	assert_true(in_region(p) && in_region(keep));
	touch(p, n);
	pa = (uintptr_t)p;
	free(p);
	b = stats();
	assert_int_equal(b.cached_bytes, n);
	assert_int_equal(REG->cached_bytes, n);
	assert_int_equal(resident_pages(pa, n), n / os); /* not decommitted */
	q = malloc(n);
	assert_int_equal((uintptr_t)q, pa);
	b = stats();
	assert_int_equal(b.cached_bytes, 0);
	assert_int_equal(b.recycled_bytes_total - a.recycled_bytes_total, n);
	assert_int_equal(resident_pages((uintptr_t)q, n), n / os); /* before any touch */
	free(q);
	assert_int_equal(stats().cached_bytes, n);
	assert_int_equal(malloc_trim(0), 1);
	assert_int_equal(stats().cached_bytes, 0);
	assert_int_equal(resident_pages(pa, n), 0);
	/* from decommitted pages now: nothing resident until touched */
	q = malloc(n);
	assert_int_equal((uintptr_t)q, pa);
	assert_int_equal(resident_pages((uintptr_t)q, n), 0);
	assert_int_equal(stats().recycled_bytes_total - a.recycled_bytes_total, n);
	free(q);
	free(keep);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* A sample no warm run fits takes a warm run plus the cold pages next to
 * it (region/pages.c, merge_warm): only the cold part is faulted in.
 * Layout, in pages from x: A (1, live), B1 (2, freed last: warm), B2 (2,
 * freed and trimmed: cold), C (1, live), 6 cold pages.  A 4-page sample
 * starts at B1 (2 pages recycled), where without the merge it would take
 * the 6 cold pages.  Then with the cold run on the right of a 1-page warm
 * run (A freed): a 5-page sample starts at A. */
static void test_page_cache_merge(void **state)
{
	struct heapscope_sampling_stats a;
	char *first, *A, *B1, *B2, *C, *E;
	uintptr_t x;

	(void)state;
	malloc_trim(0);
	first = malloc(12 * PAGE - 100);
	touch(first, 12 * PAGE - 100);
	x = (uintptr_t)first;
	free(first); /* the only warm run: 12 pages, nothing cold on its left */
	A = malloc(100);
	assert_int_equal((uintptr_t)A, x); /* warm runs first */
	B1 = malloc(2 * PAGE - 100);
	assert_int_equal((uintptr_t)B1, x + PAGE);
	B2 = malloc(2 * PAGE - 100);
	assert_int_equal((uintptr_t)B2, x + 3 * PAGE);
	C = malloc(100);
	assert_int_equal((uintptr_t)C, x + 5 * PAGE);
	free(B2);
	malloc_trim(0); /* [x+3, x+5) and [x+6, x+12) cold */
	free(B1);	/* warm [x+1, x+3) */
	assert_int_equal(stats().cached_bytes, 2 * PAGE);
	assert_int_equal(heapscope_sampled_check(), 0);
	a = stats();
	E = malloc(4 * PAGE - 100);
	assert_int_equal((uintptr_t)E, x + PAGE);
	assert_int_equal(stats().recycled_bytes_total - a.recycled_bytes_total,
			 2 * PAGE);
	assert_int_equal(stats().cached_bytes, 0);
	assert_int_equal(heapscope_sampled_check(), 0);
	touch(E, 4 * PAGE - 100);
	free(E);
	malloc_trim(0); /* cold [x+1, x+5) */
	free(A);	/* warm [x, x+1) */
	a = stats();
	E = malloc(5 * PAGE - 100);
	assert_int_equal((uintptr_t)E, x);
	assert_int_equal(stats().recycled_bytes_total - a.recycled_bytes_total,
			 PAGE);
	assert_int_equal(heapscope_sampled_check(), 0);
	free(E);
	free(C);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* Random sampled allocations and frees of 1..40 pages, with trims that
 * turn warm runs cold: the page runs stay consistent (lists, tags, LRU,
 * counts; heapscope_sampled_check) and no block overlaps another (each
 * keeps the pattern written into its first and last bytes). */
static void test_page_cache_random(void **state)
{
	enum { SLOTS = 48, OPS = 3000 };
	char *blk[SLOTS] = {0};
	size_t len[SLOTS];
	uint64_t r = 42;

	(void)state;
	for (int op = 0; op < OPS; op++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		unsigned k = (unsigned)(r >> 33) % SLOTS;
		if (blk[k]) {
			assert_int_equal(blk[k][0], (char)k);
			assert_int_equal(blk[k][len[k] - 1], (char)k);
			free(blk[k]);
			blk[k] = NULL;
		} else {
			len[k] = ((r >> 40) % (40 * PAGE)) + 1;
			blk[k] = malloc(len[k]);
			assert_non_null(blk[k]);
			assert_true(in_region(blk[k]));
			blk[k][0] = blk[k][len[k] - 1] = (char)k;
		}
		if (op % 500 == 499)
			malloc_trim(0);
		if (op % 50 == 0)
			assert_int_equal(heapscope_sampled_check(), 0);
	}
	for (int k = 0; k < SLOTS; k++)
		free(blk[k]);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* Cache admission and decay (region/pages.c); run with
 * HEAPSCOPE_SAMPLED_CACHE=1M.  After many one-page samples, a freed 4 MiB
 * sample (512 pages: over 2 MiB and over 64 times the mean run asked for)
 * is not cached; after the asks have grown to 64-page runs, the same free
 * is cached (the budget is twice the pages in use).  Above the 1 MiB
 * floor a cached run not reused within a second goes cold at the next
 * sampled allocation; below it, runs stay. */
static void test_page_cache_admit_decay(void **state)
{
	enum { SMALL = 200 };
	static char *blk[SMALL];
	char *big, *mid[40], *sep[40];
	const size_t four = 512 * PAGE - 64;

	(void)state;
	malloc_trim(0);
	big = malloc(four); /* asked: one 512-page run */
	for (int i = 0; i < SMALL; i++)
		blk[i] = malloc(100); /* then 200 one-page runs */
	touch(big, four);
	free(big);
	assert_int_equal(stats().cached_bytes, 0);
	/* asks grow: 40 runs of 64 pages, mean -> ~64 pages */
	for (int i = 0; i < 40; i++) {
		mid[i] = malloc(64 * PAGE - 64);
		sep[i] = malloc(100);
	}
	big = malloc(four);
	touch(big, four);
	free(big);
	assert_int_equal(stats().cached_bytes, 512 * PAGE);
	/* decay: 1.1 s later, the next sample's allocation sends it cold */
	struct timespec ts = { 1, 100 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	char *p = malloc(100);
	assert_true(in_region(p));
	assert_int_equal(stats().cached_bytes, 0);
	/* below the floor nothing decays: p's page and a 64-page run are
	 * still kept 1.1 s later; the next sample takes p's page */
	free(p);
	free(mid[0]);
	assert_int_equal(stats().cached_bytes, 65 * PAGE);
	nanosleep(&ts, NULL);
	p = malloc(100);
	assert_true(in_region(p)); /* (p used: the pair is not elided) */
	assert_int_equal(stats().cached_bytes, 64 * PAGE);
	free(p);
	for (int i = 0; i < 40; i++) {
		if (i)
			free(mid[i]);
		free(sep[i]);
	}
	for (int i = 0; i < SMALL; i++)
		free(blk[i]);
	assert_int_equal(heapscope_sampled_check(), 0);
	malloc_trim(0);
	assert_int_equal(stats().cached_bytes, 0);
}

/* realloc growing a sampled block: at T = 1 the new size is sampled too,
 * so it stays where it is while its pages can grow in place (room in its
 * page, or free pages right after it), re-recorded with the new size (one
 * sample freed, one taken); next to a live block it moves.  Contents are
 * kept either way. */
static void test_realloc_grow_in_place(void **state)
{
	struct heapscope_sampling_stats a = stats(), b;
	const struct heapscope_record *rec;
	uint64_t seq0;
	char *p, *q, *blocker;

	(void)state;
	/* a known layout: an empty cache, then one 6-page warm run, whose
	 * first page the 100-byte sample takes (warm runs go first) */
	malloc_trim(0);
	q = malloc(6 * PAGE - 100);
	free(q);
	assert_int_equal(stats().cached_bytes, 6 * PAGE);
	p = malloc(100);
	assert_ptr_equal(p, q);
	for (int i = 0; i < 100; i++)
		p[i] = (char)i;
	seq0 = find_record(p)->seq;
	q = realloc(p, 5000); /* 5000 fits p's 8 KiB page */
	assert_ptr_equal(q, p);
	rec = find_record(q);
	assert_non_null(rec);
	assert_true(rec->seq > seq0 + 1);
	assert_int_equal(rec->requested, 5000);
	assert_int_equal(rec->allocated, malloc_usable_size(q));
	assert_int_equal(rec->span_bytes, PAGE);
	b = stats();
	assert_int_equal(b.samples_total, a.samples_total + 3);
	assert_int_equal(b.frees_total, a.frees_total + 2);
	assert_int_equal(b.live, a.live + 1);
	for (int i = 100; i < 5000; i++)
		q[i] = 7;
	/* 40000 B = 5 pages: 4 more from the warm run after it */
	p = realloc(q, 40000);
	assert_ptr_equal(p, q);
	rec = find_record(p);
	assert_int_equal(rec->requested, 40000);
	assert_int_equal(rec->span_bytes, 5 * PAGE);
	assert_int_equal(stats().pages_bytes, a.pages_bytes + 5 * PAGE);
	assert_int_equal(stats().cached_bytes, PAGE);
	for (int i = 0; i < 100; i++)
		assert_int_equal(p[i], (char)i);
	assert_int_equal(p[4999], 7);
	/* a live block right after it (the last warm page): the next
	 * growth moves it */
	blocker = malloc(100);
	assert_ptr_equal(blocker, p + 5 * PAGE);
	q = realloc(p, 100000);
	assert_ptr_not_equal(q, p);
	assert_null(find_record(p));
	assert_int_equal(find_record(q)->requested, 100000);
	for (int i = 0; i < 100; i++)
		assert_int_equal(q[i], (char)i);
	assert_int_equal(q[4999], 7);
	free(q);
	free(blocker);
	b = stats();
	assert_int_equal(b.live, a.live);
	assert_int_equal(b.pages_bytes, a.pages_bytes);
	assert_int_equal(REG->live, count_live_records());
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* Run with HEAPSCOPE_SAMPLED_CACHE=0: no cache at all, however many
 * samples are live (the budget otherwise grows to twice their pages):
 * every freed sampled block is decommitted at once. */
static void test_page_cache_off(void **state)
{
	const size_t n = 64 * 1024;
	char *live[16], *blk;
	uintptr_t a;

	(void)state;
	for (int i = 0; i < 16; i++) {
		live[i] = malloc(n);
		touch(live[i], n);
	}
	blk = malloc(n);
	assert_true(in_region(blk));
	touch(blk, n);
	a = (uintptr_t)blk;
	free(blk);
	assert_int_equal(stats().cached_bytes, 0);
	assert_int_equal(resident_pages(a, n), 0);
	for (int i = 0; i < 16; i++)
		free(live[i]);
	assert_int_equal(stats().cached_bytes, 0);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* Run with HEAPSCOPE_SAMPLED_CACHE=192K: three 64 KiB blocks freed in
 * turn (kept apart by live ones, so they do not merge) fill the cache;
 * the fourth evicts the least recently freed, which is decommitted. */
static void test_page_cache_eviction(void **state)
{
	const size_t n = 64 * 1024, os = (size_t)sysconf(_SC_PAGESIZE);
	char *blk[4], *sep[4];
	uintptr_t addr[4];

	(void)state;
	malloc_trim(0);
	for (int i = 0; i < 4; i++) {
		blk[i] = malloc(n);
		sep[i] = malloc(100);
		touch(blk[i], n);
		addr[i] = (uintptr_t)blk[i];
	}
	for (int i = 0; i < 4; i++)
		free(blk[i]);
	assert_int_equal(stats().cached_bytes, 3 * n);
	assert_int_equal(resident_pages(addr[0], n), 0);
	for (int i = 1; i < 4; i++)
		assert_int_equal(resident_pages(addr[i], n), n / os);
	/* a block larger than the whole cache is decommitted at once */
	blk[0] = malloc(4 * n);
	touch(blk[0], 4 * n);
	addr[0] = (uintptr_t)blk[0];
	free(blk[0]);
	assert_int_equal(resident_pages(addr[0], 4 * n), 0);
	assert_int_equal(stats().cached_bytes, 3 * n);
	for (int i = 0; i < 4; i++)
		free(sep[i]);
	assert_int_equal(heapscope_sampled_check(), 0);
}

static __attribute__((noinline)) void *alloc_here(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" ::: "memory"); /* no tail call */
	return p;
}

static void test_stack(void **state)
{
	void *p = alloc_here(48);
	const struct heapscope_record *rec = find_record(p);

	(void)state;
	assert_non_null(rec);
	assert_true(rec->depth >= 2 && rec->depth <= HEAPSCOPE_MAX_FRAMES);
	/* stack[0] is the return address in the caller of malloc */
	assert_true(rec->stack[0] - (uintptr_t)alloc_here < 256);
	assert_true(rec->stack[1] - (uintptr_t)test_stack < 256);
	free(p);
}

/* 100,000 live samples, then freed: the region is one VMA. */
static void test_many_live(void **state)
{
	enum { N = 100000 };
	void **v = malloc(N * sizeof(*v));
	uint64_t live0;
	int lines0, lines1;

	(void)state;
	lines0 = maps_lines();
	live0 = REG->live;
	for (int i = 0; i < N; i++) {
		v[i] = malloc((size_t)(i % 1000) + 1);
		assert_true(in_region(v[i]));
	}
	assert_int_equal(REG->live, live0 + N);
	assert_int_equal(count_live_records(), live0 + N);
	lines1 = maps_lines();
	print_message("maps lines: %d -> %d with %d live samples\n", lines0,
		      lines1, N);
	assert_true(lines1 <= lines0 + 4);
	assert_int_equal(heapscope_sampled_check(), 0);
	for (int i = 0; i < N; i += 2)
		free(v[i]);
	assert_int_equal(heapscope_sampled_check(), 0);
	for (int i = 1; i < N; i += 2)
		free(v[i]);
	assert_int_equal(REG->live, live0);
	assert_int_equal(heapscope_sampled_check(), 0);
	free(v);
}

static uint32_t worker_tid[4];

static void *thread_main(void *arg)
{
	void *v[64] = { 0 };
	unsigned x = (unsigned)(uintptr_t)arg;

	worker_tid[x - 1] = (uint32_t)gettid();
	for (int i = 0; i < 20000; i++) {
		int k = (x = x * 1103515245 + 12345) >> 16 & 63;

		free(v[k]);
		v[k] = malloc((x >> 8) % 20000);
		if (!in_region(v[k]))
			return (void *)1;
	}
	for (int k = 0; k < 64; k++)
		free(v[k]);
	return NULL;
}

static void test_threads(void **state)
{
	pthread_t t[4];
	struct heapscope_record *r;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, thread_main,
						(void *)(uintptr_t)(i + 1)), 0);
	for (int i = 0; i < 4; i++) {
		void *ret;

		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	/* glibc keeps per-thread blocks (DTV) of cached stacks alive: check
	 * that nothing the workers allocated themselves is still live */
	r = records();
	for (uint64_t i = 0; i < REG->high_water; i++)
		for (int k = 0; k < 4; k++)
			assert_false(r[i].seq != 0 && r[i].tid == worker_tid[k]);
	assert_int_equal(heapscope_sampled_check(), 0);
}

static volatile int stop_reader;

/* A seqlock reader, as a collector does it: between two equal even
 * generations the live counter equals the number of records in use. */
static void *reader_main(void *arg)
{
	uint64_t consistent = 0;

	(void)arg;
	while (!stop_reader) {
		uint64_t g0 = __atomic_load_n(&REG->generation, __ATOMIC_ACQUIRE);
		uint64_t live, n;

		if (g0 & 1)
			continue;
		live = __atomic_load_n(&REG->live, __ATOMIC_RELAXED);
		n = count_live_records();
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&REG->generation, __ATOMIC_RELAXED) != g0)
			continue;
		if (n != live)
			return (void *)1;
		consistent++;
	}
	/* The writers are done: this read cannot be disturbed.  A stable
	 * window during the writes is not guaranteed (count_live_records
	 * walks every slot up to high_water, 100,000+ after
	 * test_many_live, while three writers bump the generation on
	 * every sample): requiring one made the test fail 1 run in 5. */
	print_message("%llu consistent reads while writing\n",
		      (unsigned long long)consistent);
	if (count_live_records() != REG->live)
		return (void *)2;
	return NULL;
}

static void test_seqlock_reader(void **state)
{
	pthread_t w[3], r;
	void *ret;

	(void)state;
	stop_reader = 0;
	assert_int_equal(pthread_create(&r, NULL, reader_main, NULL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&w[i], NULL, thread_main,
						(void *)(uintptr_t)(i + 1)), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_join(w[i], NULL), 0);
	stop_reader = 1;
	assert_int_equal(pthread_join(r, &ret), 0);
	assert_null(ret);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The extension slot (proxy span data) of live sample p. */
static const struct heapscope_record_ext *find_ext(const void *p)
{
	const struct heapscope_record *r = find_record(p);
	const struct heapscope_record_ext *e;

	assert_non_null(r);
	e = (const void *)(uintptr_t)(REG->ext_records +
				      (uint64_t)(r - records()) *
					      REG->ext_size);
	assert_int_equal(e->seq, r->seq);
	return e;
}

/* The background refresh of the proxy span data: every live slot about
 * once per 100 ms (fragmentation.c REFRESH_PERIOD_NS), at most 16 slots
 * per sampled event.  Runs first, so the registry's high water mark hw
 * is small: after a 150 ms pause one event refreshes all live samples
 * (hw <= 16); in a burst of events right after it the budget accrues at
 * hw slots per 100 ms, so at most hw * D / 100 ms slots are refreshed in
 * D ns (D measured: a descheduled run loosens the bound instead of
 * failing).  With 16 slots refreshed on every event, all 8 samples were
 * refreshed by the burst's first event. */
static void test_fragmentation_refresh(void **state)
{
	enum { N = 8, BURST = 64 };
	void *p[N], *volatile q;
	uint64_t t0, t1, t2, hw, bound, refreshed = 0;

	(void)state;
	if (!REG->ext_records || proxy_max() < 64)
		skip();
	for (int i = 0; i < N; i++)
		p[i] = malloc(64);
	struct timespec pause = {0, 150000000};
	nanosleep(&pause, NULL);
	t0 = mono_ns();
	q = malloc(64); /* one sampled alloc and free */
	free(q);
	t1 = mono_ns();
	for (int i = 0; i < N; i++) {
		uint64_t u = find_ext(p[i])->updated_ns;

		assert_true(u >= t0 && u <= t1);
	}
	for (int i = 0; i < BURST; i++) {
		q = malloc(64);
		free(q);
	}
	t2 = mono_ns();
	hw = REG->high_water;
	for (int i = 0; i < N; i++)
		refreshed += find_ext(p[i])->updated_ns > t1;
	assert_true(hw <= 16);
	bound = hw * (t2 - t0) / 100000000u;
	print_message("burst of %d pairs in %llu us, hw %llu: %llu of %d "
		      "slots refreshed (bound %llu)\n",
		      BURST, (unsigned long long)(t2 - t1) / 1000,
		      (unsigned long long)hw, (unsigned long long)refreshed, N,
		      (unsigned long long)bound);
	assert_true(refreshed <= bound);
	for (int i = 0; i < N; i++)
		free(p[i]);
}

/* Run-time rate changes (last: it leaves the period where it found it). */
static void test_set_period(void **state)
{
	void *p, *q;

	(void)state;
	assert_int_equal(heapscope_set_sample_period(HEAPSCOPE_MAX_SAMPLE_PERIOD + 1),
			 -EINVAL);
	assert_int_equal(heapscope_set_sample_period(0), 0);
	assert_int_equal(heapscope_get_sample_period(), 0);
	assert_int_equal(REG->sample_period, 0);
	p = malloc(100);
	assert_false(in_region(p));
	free(p);
	assert_int_equal(heapscope_set_sample_period(1), 0);
	/* off parks the counter at 128 MiB: a bigger request reaches the
	 * slow path, sees the new period and is sampled */
	p = malloc((size_t)129 << 20);
	assert_non_null(p);
	assert_true(in_region(p));
	q = malloc(10);
	assert_true(in_region(q));
	free(p);
	free(q);
	/* a collector's request through the registry control word */
	REG->control_period = -1;
	p = malloc(10);
	assert_false(in_region(p));
	assert_int_equal(heapscope_get_sample_period(), 0);
	assert_int_equal(REG->control_period, 0);
	free(p);
	assert_int_equal(heapscope_set_sample_period(1), 0);
	p = malloc((size_t)129 << 20);
	assert_true(in_region(p));
	free(p);
}

int main(void)
{
	const struct CMUnitTest eviction[] = {
		cmocka_unit_test(test_page_cache_eviction),
	};
	const struct CMUnitTest cache_off[] = {
		cmocka_unit_test(test_page_cache_off),
	};
	const struct CMUnitTest cache_decay[] = {
		cmocka_unit_test(test_page_cache_admit_decay),
	};
	const struct CMUnitTest proxies[] = {
		cmocka_unit_test(test_proxy_threshold),
		cmocka_unit_test(test_every_alloc_sampled),
		cmocka_unit_test(test_stats_fragmentation),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fragmentation_refresh),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_every_alloc_sampled),
		cmocka_unit_test(test_calloc_realloc_aligned),
		cmocka_unit_test(test_free_reuse_and_registry),
		cmocka_unit_test(test_invalid_frees),
		cmocka_unit_test(test_stats_fragmentation),
		cmocka_unit_test(test_stack),
		cmocka_unit_test(test_many_live),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_seqlock_reader),
		cmocka_unit_test(test_set_period),
		cmocka_unit_test(test_page_cache),
		cmocka_unit_test(test_page_cache_merge),
		cmocka_unit_test(test_page_cache_random),
		cmocka_unit_test(test_realloc_grow_in_place),
		cmocka_unit_test(test_proxy_threshold),
	};
	const char *cache = getenv("HEAPSCOPE_SAMPLED_CACHE");

	if (cache && strcmp(cache, "192K") == 0)
		return cmocka_run_group_tests(eviction, NULL, NULL);
	if (cache && strcmp(cache, "0") == 0)
		return cmocka_run_group_tests(cache_off, NULL, NULL);
	if (cache && strcmp(cache, "1M") == 0)
		return cmocka_run_group_tests(cache_decay, NULL, NULL);
	if (getenv("HEAPSCOPE_PROXY_MAX")) /* sampled_proxy_* */
		return cmocka_run_group_tests(proxies, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
