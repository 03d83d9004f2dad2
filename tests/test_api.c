// SPDX-License-Identifier: MIT
/*
 * tests/test_api.c - the in-process API of heapscope.h through the real
 * library (linked: this program's malloc is heapscope's): sampler edge
 * cases (off / on at run time with several threads, period 1 exact to the
 * byte, 0-byte samples, the estimates), heap snapshots, allocation and
 * lifetime sessions, allocator statistics, folded / pprof output,
 * HEAPSCOPE_PROFILE_AT_EXIT, HEAPSCOPE_SAMPLE_SEED, and mismatched-size
 * delete detection.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "heapscope/abi.h"
#include "heapscope/heapscope.h"

extern struct heapscope_registry heapscope_registry;
void free_sized(void *p, size_t size);
void _ZdlPvm(void *p, size_t size); /* operator delete(void *, size_t) */

#define REG (&heapscope_registry)
static const char *self_exe;

static int in_region(const void *p)
{
	return (uintptr_t)p - REG->region_start < REG->region_size;
}

/* Set the period and make this thread's counter use it at once: a block
 * larger than any counter reaches the slow path, which re-draws. */
static void set_period_now(int64_t t)
{
	assert_int_equal(heapscope_set_sample_period(t), 0);
	free(malloc((size_t)300 << 20));
}

static struct heapscope_sampling_stats sstats(void)
{
	struct heapscope_sampling_stats st;

	assert_int_equal(heapscope_get_sampling_stats(&st, sizeof(st)), 0);
	return st;
}

/* ---- sampler edge cases ---- */

#define NTHREADS 4
static pthread_barrier_t barrier;
static int thread_sampled[NTHREADS];

static void *off_on_thread(void *arg)
{
	int idx = (int)(intptr_t)arg;
	void *ps[1000];

	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 1000; i++)
			ps[i] = malloc((size_t)(i % 500));
		for (int i = 0; i < 1000; i++)
			free(ps[i]);
	}
	pthread_barrier_wait(&barrier); /* main checks: nothing sampled */
	pthread_barrier_wait(&barrier); /* main switched sampling on (T = 1) */
	/* the off counter (128 MiB) runs out within 128 MiB of allocation */
	for (int i = 0; i < 140; i++)
		free(malloc((size_t)1 << 20));
	{
		void *p = malloc(24);

		thread_sampled[idx] = in_region(p);
		free(p);
	}
	return NULL;
}

static void test_off_then_on_threads(void **state)
{
	pthread_t t[NTHREADS];
	uint64_t before;

	(void)state;
	set_period_now(0);
	assert_int_equal(heapscope_get_sample_period(), 0);
	before = sstats().samples_total;
	pthread_barrier_init(&barrier, NULL, NTHREADS + 1);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, off_on_thread, (void *)(intptr_t)i);
	pthread_barrier_wait(&barrier);
	assert_int_equal(sstats().samples_total, before);
	assert_int_equal(heapscope_set_sample_period(1), 0);
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(thread_sampled[i], 1);
	}
	pthread_barrier_destroy(&barrier);
	assert_true(sstats().samples_total > before);
	set_period_now(0);
}

/* Samples of the snapshot p with seq >= seq0. */
static size_t select_since(const struct heapscope_profile *p, uint64_t seq0,
			   const struct heapscope_sample **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < p->count; i++)
		if (p->samples[i].seq >= seq0 && n < max)
			out[n++] = &p->samples[i];
	return n;
}

static void test_period_one_exact(void **state)
{
	static const size_t sizes[] = { 0, 1, 7, 8, 24, 100, 1000, 4095, 4096,
					65537, 262144, 262145, 1 << 20,
					(20 << 20) + 3 };
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	const struct heapscope_sample *sel[2 * N];
	struct heapscope_profile *prof;
	void *p[N];
	uint64_t seq0, want_a = 0, want_r = 0, want_frag = 0;
	uint64_t got_a = 0, got_r = 0, got_frag = 0;
	double got_n = 0;
	size_t n;

	(void)state;
	set_period_now(1);
	seq0 = REG->next_seq;
	for (int i = 0; i < N; i++) {
		p[i] = malloc(sizes[i]);
		assert_true(in_region(p[i])); /* 0 bytes too */
		want_a += malloc_usable_size(p[i]);
		want_r += sizes[i];
		want_frag += malloc_usable_size(p[i]) - sizes[i];
	}
	assert_int_equal(heapscope_heap_profile(&prof), 0);
	assert_int_equal(prof->kind, HEAPSCOPE_PROFILE_HEAP);
	assert_int_equal(prof->period, 1);
	n = select_since(prof, seq0, sel, 2 * N);
	assert_int_equal(n, N);
	for (size_t i = 0; i < n; i++) {
		const struct heapscope_sample *s = sel[i];

		assert_int_equal(s->weight, s->requested + 1);
		assert_true(s->count_estimate == 1.0);
		assert_int_equal(s->bytes_estimate, s->allocated);
		assert_int_equal(s->requested_estimate, s->requested);
		assert_true(s->depth > 0);
		got_n += s->count_estimate;
		got_a += s->bytes_estimate;
		got_r += s->requested_estimate;
		got_frag += s->allocated - s->requested;
	}
	/* exact to the byte */
	assert_true(got_n == N);
	assert_int_equal(got_a, want_a);
	assert_int_equal(got_r, want_r);
	assert_int_equal(got_frag, want_frag);
	heapscope_profile_free(prof);
	for (int i = 0; i < N; i++)
		free(p[i]);
	/* frees show at once */
	assert_int_equal(heapscope_heap_profile(&prof), 0);
	assert_int_equal(select_since(prof, seq0, sel, 2 * N), 0);
	heapscope_profile_free(prof);
}

static void test_estimate_formulas(void **state)
{
	struct heapscope_profile *prof;
	void *p[20000];
	uint64_t seq0, frag = 0;
	size_t checked = 0;

	(void)state;
	set_period_now(4096);
	seq0 = REG->next_seq;
	for (int i = 0; i < 20000; i++)
		p[i] = malloc((size_t)(i * 37 % 3000));
	assert_int_equal(heapscope_heap_profile(&prof), 0);
	for (size_t i = 0; i < prof->count; i++) {
		const struct heapscope_sample *s = &prof->samples[i];
		unsigned __int128 w = s->weight, k = s->requested + 1;

		if (s->allocated > s->requested)
			frag += (uint64_t)(w * (s->allocated - s->requested) / k);
		if (s->seq < seq0)
			continue;
		checked++;
		assert_true(s->count_estimate == (double)s->weight / (double)k);
		assert_int_equal(s->bytes_estimate, (uint64_t)(w * s->allocated / k));
		assert_int_equal(s->requested_estimate,
				 (uint64_t)(w * s->requested / k));
		/* W = T + k - f with 1 <= f <= k: T <= W <= T + k - 1 */
		assert_true(s->weight >= 4096 && s->weight <= 4096 + k - 1);
	}
	assert_true(checked > 100);
	assert_int_equal(prof->fragmentation_estimate, frag);
	heapscope_profile_free(prof);
	for (int i = 0; i < 20000; i++)
		free(p[i]);
	set_period_now(0);
}

/* ---- sessions ---- */

static int has_ptr(const struct heapscope_profile *p, const void *ptr)
{
	for (size_t i = 0; i < p->count; i++)
		if (p->samples[i].ptr == (uintptr_t)ptr)
			return 1;
	return 0;
}

static void test_allocs_sessions(void **state)
{
	struct heapscope_profile *p1, *p2;
	heapscope_session_t s1, s2;
	void *a[3], *b[2], *c;

	(void)state;
	set_period_now(1);
	s1 = heapscope_allocs_start(0);
	assert_true(s1 >= 1);
	for (int i = 0; i < 3; i++)
		a[i] = malloc(100 + i);
	s2 = heapscope_allocs_start(2); /* room for 2 samples only */
	assert_true(s2 >= 1 && s2 != s1);
	for (int i = 0; i < 2; i++)
		b[i] = malloc(200 + i);
	c = malloc(300);
	free(c); /* frees do not remove samples from an allocs profile */
	assert_int_equal(heapscope_allocs_stop(s1, &p1), 0);
	free(a[0]);
	c = malloc(300);
	assert_int_equal(heapscope_allocs_stop(s2, &p2), 0);
	assert_int_equal(heapscope_allocs_stop(s2, &p2), -EINVAL);
	assert_int_equal(p1->kind, HEAPSCOPE_PROFILE_ALLOCS);
	assert_int_equal(p1->count, 6);
	for (int i = 0; i < 3; i++)
		assert_true(has_ptr(p1, a[i]));
	assert_true(has_ptr(p1, b[0]) && has_ptr(p1, b[1]));
	assert_int_equal(p2->count, 2);
	assert_int_equal(p2->dropped, 2); /* both mallocs of c */
	assert_true(has_ptr(p2, b[0]) && has_ptr(p2, b[1]));
	assert_true(p1->bytes_estimate >= 100 + 101 + 102 + 200 + 201 + 300);
	heapscope_profile_free(p1);
	heapscope_profile_free(p2);
	free(a[1]);
	free(a[2]);
	free(b[0]);
	free(b[1]);
	free(c);
	assert_int_equal(heapscope_allocs_stop(0, &p1), -EINVAL);
	assert_int_equal(heapscope_allocs_start((size_t)1 << 30), -EINVAL);
}

static void *free_in_thread(void *p)
{
	free(p);
	return NULL;
}

static void test_lifetime_session(void **state)
{
	struct heapscope_profile *p;
	heapscope_session_t h;
	void *old, *x, *y, *z;
	pthread_t t;

	(void)state;
	set_period_now(1);
	old = malloc(10);
	h = heapscope_lifetime_start(0);
	assert_true(h >= 1);
	x = malloc(1000);
	y = malloc(2000);
	z = malloc(3000);
	usleep(2000);
	free(x);
	pthread_create(&t, NULL, free_in_thread, y);
	pthread_join(t, NULL);
	free(old); /* allocated before the session: not in it */
	assert_int_equal(heapscope_lifetime_stop(h, &p), 0);
	free(z);   /* after the session */
	assert_int_equal(p->kind, HEAPSCOPE_PROFILE_LIFETIME);
	assert_int_equal(p->count, 2);
	for (size_t i = 0; i < p->count; i++) {
		const struct heapscope_sample *s = &p->samples[i];

		assert_true(s->ptr == (uintptr_t)x || s->ptr == (uintptr_t)y);
		assert_int_equal(s->same_thread, s->ptr == (uintptr_t)x);
		assert_true(s->lifetime_ns >= 1000000);
		assert_int_equal(s->lifetime_ns, s->free_time_ns - s->time_ns);
		assert_true(s->depth > 0 && s->free_depth > 0);
	}
	heapscope_profile_free(p);
	set_period_now(0);
}

static void test_too_many_sessions(void **state)
{
	heapscope_session_t h[HEAPSCOPE_MAX_SESSIONS * 2 + 1];
	struct heapscope_profile *p;
	int n = 0;

	(void)state;
	for (;;) {
		heapscope_session_t s = heapscope_allocs_start(16);

		if (s < 0) {
			assert_int_equal(s, -EBUSY);
			break;
		}
		h[n++] = s;
		assert_true(n <= HEAPSCOPE_MAX_SESSIONS * 2);
	}
	assert_true(n >= HEAPSCOPE_MAX_SESSIONS);
	for (int i = 0; i < n; i++) {
		assert_int_equal(heapscope_allocs_stop(h[i], &p), 0);
		heapscope_profile_free(p);
	}
}

/* ---- statistics ---- */

static void test_allocator_stats(void **state)
{
	struct heapscope_allocator_stats a0, a1;
	void *big;

	(void)state;
	set_period_now(0);
	assert_int_equal(heapscope_get_allocator_stats(NULL, 0), -EINVAL);
	assert_int_equal(heapscope_get_allocator_stats(&a0, sizeof(a0)), 0);
	big = malloc((size_t)8 << 20);
	memset(big, 1, (size_t)8 << 20);
	assert_int_equal(heapscope_get_allocator_stats(&a1, sizeof(a1)), 0);
	assert_true(a1.in_use_bytes >= a0.in_use_bytes + ((size_t)8 << 20));
	assert_true(a1.large_bytes >= ((size_t)8 << 20));
	assert_true(a1.system_bytes >= a1.in_use_bytes);
	assert_true(a1.metadata_bytes > 0);
	free(big);
	set_period_now(1);
	big = malloc(100); /* sampled: 100 -> 112 size class, frag 12 */
	assert_int_equal(heapscope_get_allocator_stats(&a1, sizeof(a1)), 0);
	assert_true(a1.sampled_pages_bytes >= 8192);
	assert_true(a1.sampled_fragmentation_estimate >=
		    malloc_usable_size(big) - 100);
	free(big);
	set_period_now(0);
}

/* ---- output ---- */

__attribute__((noinline)) void *api_test_alloc_site(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" ::: "memory"); /* not a tail call */
	return p;
}

static char *slurp(const char *cmd)
{
	static char buf[1 << 16];
	FILE *f = popen(cmd, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	pclose(f);
	return buf;
}

static void test_write_formats(void **state)
{
	char folded[] = "/tmp/hs_api_XXXXXX", pb[] = "/tmp/hs_api_pb_XXXXXX";
	char cmd[256], want[64];
	void *p;
	int fd;

	(void)state;
	set_period_now(1);
	p = api_test_alloc_site(12345);
	fd = mkstemp(folded);
	assert_true(fd >= 0);
	assert_int_equal(heapscope_heap_profile_write(fd, HEAPSCOPE_FORMAT_FOLDED), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "grep 'api_test_alloc_site [0-9]*$' %s", folded);
	snprintf(want, sizeof(want), ";api_test_alloc_site %zu", malloc_usable_size(p));
	assert_non_null(strstr(slurp(cmd), want));
	fd = mkstemp(pb);
	assert_int_equal(heapscope_heap_profile_write(fd, HEAPSCOPE_FORMAT_PPROF), 0);
	assert_int_equal(heapscope_heap_profile_write(fd, 99), -EINVAL);
	close(fd);
	snprintf(cmd, sizeof(cmd), "gzip -dc %s | grep -c -a -e inuse_space -e api_test_alloc_site", pb);
	assert_int_equal(atoi(slurp(cmd)), 1); /* one line holds both */
	snprintf(cmd, sizeof(cmd), "gzip -dc %s | grep -a -o api_test_alloc_site", pb);
	assert_non_null(strstr(slurp(cmd), "api_test_alloc_site"));
	free(p);
	unlink(folded);
	unlink(pb);
	set_period_now(0);
}

/* ---- HEAPSCOPE_PROFILE_AT_EXIT and HEAPSCOPE_SAMPLE_SEED (children) ---- */

/* child: the heap at exit holds 3 blocks from api_test_alloc_site */
static int child_at_exit(void)
{
	set_period_now(1);
	for (int i = 0; i < 3; i++)
		(void)api_test_alloc_site(5000);
	exit(0);
}

static void *seed_thread(void *arg)
{
	char *out = arg;
	void *ps[4000];

	for (int i = 0; i < 4000; i++) {
		ps[i] = malloc((size_t)(i % 300));
		out[i] = in_region(ps[i]) ? '1' : '0';
	}
	for (int i = 0; i < 4000; i++)
		free(ps[i]);
	return NULL;
}

/* child: which allocations of 3 threads (started one after another) are
 * sampled, as a string of 0/1 */
static int child_seed(void)
{
	static char out[3][4001];
	pthread_t t;

	for (int i = 0; i < 3; i++) {
		pthread_create(&t, NULL, seed_thread, out[i]);
		pthread_join(t, NULL);
		printf("%s\n", out[i]);
	}
	return 0;
}

static void test_profile_at_exit(void **state)
{
	char cmd[512];
	void *p = malloc(5000);
	size_t a = malloc_usable_size(p);

	(void)state;
	free(p);
	snprintf(cmd, sizeof(cmd),
		 "rm -f /tmp/hs_at_exit.folded /tmp/hs_at_exit.pb.gz; "
		 "HEAPSCOPE_PROFILE_AT_EXIT=/tmp/hs_at_exit.folded %s at-exit && "
		 "HEAPSCOPE_PROFILE_AT_EXIT=/tmp/hs_at_exit.pb.gz %s at-exit && "
		 "grep -c 'api_test_alloc_site %zu$' /tmp/hs_at_exit.folded",
		 self_exe, self_exe, 3 * a);
	/* one line per stack: the three blocks of one call site summed */
	assert_int_equal(atoi(slurp(cmd)), 1);
	assert_int_equal(atoi(slurp("gzip -dc /tmp/hs_at_exit.pb.gz | "
				    "grep -a -c api_test_alloc_site")), 1);
	unlink("/tmp/hs_at_exit.folded");
	unlink("/tmp/hs_at_exit.pb.gz");
}

static void test_sample_seed(void **state)
{
	char cmd[512], *a, *b, *c;

	(void)state;
	snprintf(cmd, sizeof(cmd), "HEAPSCOPE_SAMPLE_RATE=4096 HEAPSCOPE_SAMPLE_SEED=5 %s seed", self_exe);
	a = strdup(slurp(cmd));
	b = strdup(slurp(cmd));
	snprintf(cmd, sizeof(cmd), "HEAPSCOPE_SAMPLE_RATE=4096 HEAPSCOPE_SAMPLE_SEED=6 %s seed", self_exe);
	c = strdup(slurp(cmd));
	assert_true(strlen(a) == 3 * 4001);
	assert_string_equal(a, b); /* every thread replays */
	assert_true(strcmp(a, c) != 0);
	/* the three threads got different streams */
	assert_true(strncmp(a, a + 4001, 4000) != 0);
	assert_true(strncmp(a + 4001, a + 8002, 4000) != 0);
	assert_non_null(strchr(a, '1'));
	free(a);
	free(b);
	free(c);
}

/* ---- mismatched-size delete ---- */

static char err_buf[8192];

/* Run fn with stderr captured into err_buf. */
static void capture_stderr(void (*fn)(void *), void *arg)
{
	char path[] = "/tmp/hs_err_XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	fflush(stderr);
	dup2(fd, 2);
	fn(arg);
	dup2(saved, 2);
	close(saved);
	lseek(fd, 0, SEEK_SET);
	n = read(fd, err_buf, sizeof(err_buf) - 1);
	err_buf[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(path);
}

__attribute__((noinline)) static void bad_free_site(void *p)
{
	free_sized(p, 50);
	__asm__ volatile("" ::: "memory");
}

static void two_bad_frees(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++)
		bad_free_site(api_test_alloc_site(100));
}

static void good_and_cxx_frees(void *arg)
{
	void *p = malloc(100);

	(void)arg;
	free_sized(p, 100);
	p = malloc(100);
	free_sized(p, malloc_usable_size(p)); /* r <= size <= a is fine */
	p = malloc(100);
	free(p);
	p = malloc(40);
	_ZdlPvm(p, 4000); /* sized delete, too big */
}

static void test_mismatched_free(void **state)
{
	uint64_t m0;

	(void)state;
	set_period_now(1);
	m0 = sstats().mismatched_frees_total;
	capture_stderr(two_bad_frees, NULL);
	assert_int_equal(sstats().mismatched_frees_total, m0 + 2);
	/* once per call site, with both sizes and the allocation's stack */
	assert_non_null(strstr(err_buf, "with size 50"));
	assert_non_null(strstr(err_buf, "allocated with size 100"));
	assert_non_null(strstr(err_buf, "allocated at"));
	assert_null(strstr(strstr(err_buf, "with size 50") + 1, "with size 50"));
	capture_stderr(good_and_cxx_frees, NULL);
	assert_int_equal(sstats().mismatched_frees_total, m0 + 3);
	assert_non_null(strstr(err_buf, "with size 4000"));
	assert_non_null(strstr(err_buf, "allocated with size 40"));
	/* the heap is intact and the pages were reused normally */
	assert_int_equal(heapscope_sampled_check(), 0);
	for (int i = 0; i < 100; i++) {
		char *p = malloc(100);

		memset(p, 7, 100);
		free(p);
	}
	assert_int_equal(heapscope_sampled_check(), 0);
	set_period_now(0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_then_on_threads),
		cmocka_unit_test(test_period_one_exact),
		cmocka_unit_test(test_estimate_formulas),
		cmocka_unit_test(test_allocs_sessions),
		cmocka_unit_test(test_lifetime_session),
		cmocka_unit_test(test_too_many_sessions),
		cmocka_unit_test(test_allocator_stats),
		cmocka_unit_test(test_write_formats),
		cmocka_unit_test(test_profile_at_exit),
		cmocka_unit_test(test_sample_seed),
		cmocka_unit_test(test_mismatched_free),
	};

	self_exe = argv[0];
	if (argc > 1 && strcmp(argv[1], "at-exit") == 0)
		return child_at_exit();
	if (argc > 1 && strcmp(argv[1], "seed") == 0)
		return child_seed();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
