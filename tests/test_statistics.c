// SPDX-License-Identifier: MIT
/*
 * tests/test_statistics.c - the statistical battery against the real
 * library (linked: this program's malloc is heapscope's).  Every estimate
 * comes from the in-process heap snapshot (heapscope_heap_profile), taken
 * right after the allocations, with nothing freed or waited for.
 *
 * Seeds: HEAPSCOPE_TEST_SEED (default 1) picks the library's sampler seed
 * (HEAPSCOPE_SAMPLE_SEED, set by re-executing this program) and this
 * test's own choices, so a checker can rerun the battery with other seeds.
 * No bound is tuned to a seed: every bound comes from the estimator's own
 * variance, computed exactly for the heap at hand:
 *
 *   one allocation of k = r + 1 bytes contributes X = (T + k - f) 1{f <= k}
 *   (f ~ geometric, mean T: the first sampling point inside it), and the
 *   sampling points of different allocations are independent (the point
 *   process is Bernoulli(1/T) per byte of the thread's stream), so
 *       E[X] = k,  v(k) = Var X = sum_{f=1..k} p q^(f-1) (T+k-f)^2 - k^2,
 *   and the bytes estimate a W / k of the heap has variance
 *       V = sum_i (a_i / k_i)^2 v(k_i).
 *
 * Checks per heap (N independent trials; the heap is freed between them,
 * trials are independent because the process is memoryless):
 *   - bias: |mean relative error| < 1%, and N is chosen so that 1% is at
 *     least 4 standard errors of the mean (N >= 16 V / (0.01 M)^2); the
 *     mean error must also be within 5 standard errors (a z-test);
 *   - variance: the sample variance of the trial estimates (in (r+1)-
 *     units, sum W) within 5 standard errors of the exact V (the standard
 *     error of a sample variance from the sample fourth moment), and V
 *     itself inside the band [T^2 - T, T * K] of DESIGN.md (K = sum k).
 * With ~40 such checks per run, each failing by chance with probability
 * < 1e-6, twenty reruns under other seeds fail with probability < 1e-3.
 *
 * Periods: the bias target needs about 160000 samples per heap whatever
 * the period (N K / T = 16 / 0.01^2 for tiny objects), so a small period
 * only saves the unsampled allocations: the tiny-object heaps use 256 B,
 * 1 KiB and 4 KiB, the 4 KiB heaps and mixes 4 KiB, the large ones 64 KiB.
 * The Go seed scenarios run at the default 2 MiB and at 1.
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "heapscope/abi.h"
#include "heapscope/heapscope.h"

extern struct heapscope_registry heapscope_registry;
#define REG (&heapscope_registry)

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define N_MIN 200      /* trials at least (variance test power) */
#define N_MAX 4000
#define Z_BOUND 5.0    /* sigmas */

static uint64_t test_seed = 1;
static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static void set_period_now(int64_t t)
{
	assert_int_equal(heapscope_set_sample_period(t), 0);
	/* larger than any counter: reaches the slow path, which re-draws */
	free(malloc((size_t)400 << 20));
}

/* v(k) = Var X for one allocation of k = r + 1 bytes at period T. */
static long double var_one(uint64_t k, int64_t T)
{
	long double p = 1.0L / (long double)T, q = 1.0L - p, qm = 1.0L;
	long double c = (long double)T + (long double)k - 1.0L, e2 = 0;

	if (T == 1)
		return 0;
	/* m = f - 1 from 0: term p q^m (c - m)^2, negligible once q^m < 1e-25 */
	for (uint64_t m = 0; m < k && qm > 1e-25L; m++) {
		e2 += p * qm * (c - (long double)m) * (c - (long double)m);
		qm *= q;
	}
	return e2 - (long double)k * (long double)k;
}

struct heap_result {
	double truth;       /* sum a, bytes */
	double K;           /* sum (r + 1) */
	double V;           /* exact variance of the bytes estimate */
	double Vk;          /* exact variance of sum W */
	double mean_rel;    /* mean relative error of the bytes estimate */
	double z_bias;      /* mean error / its standard error */
	double var_ratio;   /* sample var(sum W) / Vk */
	double var_tol;     /* 5 standard errors of that ratio */
	size_t trials, samples;
};

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Exact variances of the heap `sizes` (allocated sizes `alloc`). */
static void exact_variance(const size_t *sizes, const size_t *alloc, size_t n,
			   int64_t T, double *V, double *Vk)
{
	size_t *pairs = malloc(2 * n * sizeof(size_t));
	long double v = 0, vk = 0;

	assert_non_null(pairs);
	for (size_t i = 0; i < n; i++) {
		pairs[2 * i] = sizes[i];
		pairs[2 * i + 1] = alloc[i];
	}
	qsort(pairs, n, 2 * sizeof(size_t), cmp_size);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		long double one, ratio;

		while (j < n && pairs[2 * j] == pairs[2 * i])
			j++;
		one = var_one(pairs[2 * i] + 1, T);
		ratio = (long double)pairs[2 * i + 1] / (long double)(pairs[2 * i] + 1);
		v += (long double)(j - i) * one * ratio * ratio;
		vk += (long double)(j - i) * one;
		i = j;
	}
	*V = (double)v;
	*Vk = (double)vk;
	free(pairs);
}

/* One trial: allocate the heap, snapshot, free.  Returns the bytes
 * estimate; *w gets sum W; *ns the samples. */
static double trial(const size_t *sizes, size_t n, void **ptrs, double *w,
		    size_t *ns)
{
	struct heapscope_profile *prof;
	uint64_t seq0 = __atomic_load_n(&REG->next_seq, __ATOMIC_RELAXED);
	double est = 0, sw = 0;

	for (size_t i = 0; i < n; i++) {
		ptrs[i] = malloc(sizes[i]);
		assert_non_null(ptrs[i]);
	}
	assert_int_equal(heapscope_heap_profile(&prof), 0);
	*ns = 0;
	for (size_t i = 0; i < prof->count; i++) {
		const struct heapscope_sample *s = &prof->samples[i];

		if (s->seq < seq0)
			continue;
		est += (double)s->allocated * (double)s->weight /
		       ((double)s->requested + 1);
		sw += (double)s->weight;
		(*ns)++;
	}
	heapscope_profile_free(prof);
	for (size_t i = 0; i < n; i++)
		free(ptrs[i]);
	*w = sw;
	return est;
}

static struct heap_result run_heap(const char *name, const size_t *sizes,
				   size_t n, int64_t T)
{
	struct heap_result r = { 0 };
	void **ptrs = malloc(n * sizeof(void *));
	size_t *alloc = malloc(n * sizeof(size_t));
	double *x = NULL, *xk = NULL, need, mean = 0, mk = 0, s2 = 0, s2k = 0,
	       m4k = 0;
	struct timespec t0, t1;

	assert_non_null(ptrs);
	assert_non_null(alloc);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* allocated sizes and the truth, from unsampled twins */
	set_period_now(0);
	for (size_t i = 0; i < n; i++) {
		void *p = malloc(sizes[i]);

		alloc[i] = malloc_usable_size(p);
		free(p);
		r.truth += (double)alloc[i];
		r.K += (double)sizes[i] + 1;
	}
	exact_variance(sizes, alloc, n, T, &r.V, &r.Vk);
	need = 16.0 * r.V / ((0.01 * r.truth) * (0.01 * r.truth));
	r.trials = need < N_MIN ? N_MIN : (size_t)ceil(need);
	if (r.trials > N_MAX) {
		printf("%s: needs %zu trials for a 4-sigma 1%% bound; make the heap bigger\n",
		       name, r.trials);
		fail();
	}
	x = malloc(r.trials * sizeof(double));
	xk = malloc(r.trials * sizeof(double));
	set_period_now(T);
	for (size_t t = 0; t < r.trials; t++) {
		size_t ns;

		x[t] = trial(sizes, n, ptrs, &xk[t], &ns);
		r.samples += ns;
		mean += x[t];
		mk += xk[t];
	}
	mean /= (double)r.trials;
	mk /= (double)r.trials;
	for (size_t t = 0; t < r.trials; t++) {
		double d = xk[t] - mk;

		s2 += (x[t] - mean) * (x[t] - mean);
		s2k += d * d;
		m4k += d * d * d * d;
	}
	s2 /= (double)(r.trials - 1);
	s2k /= (double)(r.trials - 1);
	m4k /= (double)r.trials;
	r.mean_rel = (mean - r.truth) / r.truth;
	r.z_bias = (mean - r.truth) / sqrt(r.V / (double)r.trials);
	r.var_ratio = r.Vk > 0 ? s2k / r.Vk : 0;
	/* SE of s^2: sqrt((mu4 - sigma^4 (N-3)/(N-1)) / N), from the sample */
	r.var_tol = Z_BOUND *
		    sqrt(fmax(m4k - s2k * s2k * (r.trials - 3.0) / (r.trials - 1.0),
			      0) / (double)r.trials) / r.Vk;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%-24s T=%-7ld n=%-7zu M=%.4g B trials=%-5zu samples=%-7zu "
	       "mean rel err=%+.4f%% (1%% = %.1f se) z=%+.2f  "
	       "var/exact=%.3f +- %.3f  exact var/(T*K)=%.3g  %.1fs\n",
	       name, (long)T, n, r.truth, r.trials, r.samples,
	       100 * r.mean_rel, 0.01 * r.truth / sqrt(r.V / r.trials),
	       r.z_bias, r.var_ratio, r.var_tol, r.Vk / ((double)T * r.K),
	       (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
	fflush(stdout);
	/* the bias checks */
	assert_true(fabs(r.mean_rel) < 0.01);
	assert_true(fabs(r.z_bias) <= Z_BOUND);
	/* the variance: exact V inside the design band, sample var near V */
	assert_true(r.Vk <= (double)T * r.K * (1 + 1e-9));
	assert_true(r.Vk >= ((double)T * T - T) * (1 - 1e-9) || r.K < (double)T);
	assert_true(fabs(r.var_ratio - 1) <= r.var_tol);
	assert_true(s2k <= (double)T * r.K * (1 + r.var_tol));
	free(x);
	free(xk);
	free(ptrs);
	free(alloc);
	return r;
}

static size_t *fill(size_t n, size_t size)
{
	size_t *s = malloc(n * sizeof(size_t));

	assert_non_null(s);
	for (size_t i = 0; i < n; i++)
		s[i] = size;
	return s;
}

/* ---- single-size heaps ---- */

static void single(const char *name, size_t size, size_t n, int64_t T)
{
	size_t *s = fill(n, size);

	run_heap(name, s, n, T);
	free(s);
}

static void test_single_1b(void **state)
{
	(void)state;
	single("1 B x 100000", 1, 100000, 256);
}

static void test_single_8b(void **state)
{
	(void)state;
	single("8 B x 100000", 8, 100000, 1024);
}

static void test_single_24b(void **state)
{
	(void)state;
	single("24 B x 100000", 24, 100000, 4096);
}

static void test_single_4k(void **state)
{
	(void)state;
	single("4 KiB x 1000", 4096, 1000, 4096);
}

static void test_single_240k(void **state)
{
	(void)state;
	single("240 KiB x 100", 240 * KIB, 100, 65536);
}

static void test_single_20m(void **state)
{
	(void)state;
	single("20 MiB x 1", 20 * MIB, 1, 65536);
}

/* ---- patterns that try to defeat it ---- */

/* periodic sizes: each (1 B, T - 3 B) pair is exactly T bytes of the
 * stream (a fixed-interval sampler would always hit the same member) */
static void test_periodic(void **state)
{
	const int64_t T = 4096;
	size_t n = 1000, *s = malloc(20000 * sizeof(size_t));

	(void)state;
	for (size_t i = 0; i < n; i++)
		s[i] = i % 2 ? (size_t)T - 3 : 1;
	run_heap("periodic 1/T-3", s, n, T);
	/* 255 small ones then one 1 MiB: period 1 MiB + 255 * 9 B */
	n = 20000;
	for (size_t i = 0; i < n; i++)
		s[i] = i % 256 == 255 ? MIB : 8;
	run_heap("periodic 255x8B+1MiB", s, n, T);
	free(s);
}

/* both sides of every size-class edge, and of the small/large limit */
static void test_class_edges(void **state)
{
	const int64_t T = 4096;
	size_t n = 0, cap = 4096, *s = malloc(cap * sizeof(size_t)), prev = 0;
	size_t *heap;
	size_t reps = 0, total = 0;

	(void)state;
	set_period_now(0);
	for (size_t r = 1; r <= 300 * KIB && n + 2 < cap; r++) {
		void *p = malloc(r);
		size_t a = malloc_usable_size(p);

		free(p);
		if (a != prev && r > 1) {
			s[n++] = r - 1;
			s[n++] = r;
		}
		prev = a;
		if (r > 4096)
			r += 7; /* classes are coarser up there */
	}
	assert_true(n >= 40);
	for (size_t i = 0; i < n; i++)
		total += s[i];
	/* repeat the edge list (shuffled per seed) up to ~8 MiB per heap */
	reps = (8 * MIB) / total + 1;
	heap = malloc(n * reps * sizeof(size_t));
	for (size_t i = 0; i < n * reps; i++)
		heap[i] = s[i % n];
	for (size_t i = n * reps - 1; i > 0; i--) {
		size_t j = rnd() % (i + 1), t = heap[i];

		heap[i] = heap[j];
		heap[j] = t;
	}
	printf("class edges: %zu sizes, %zu reps\n", n, reps);
	run_heap("size-class edges", heap, n * reps, T);
	free(heap);
	free(s);
}

/* alternating tiny and huge */
static void test_tiny_huge(void **state)
{
	const int64_t T = 65536;
	size_t n = 400, *s = malloc(n * sizeof(size_t));

	(void)state;
	for (size_t i = 0; i < n; i++)
		s[i] = i % 2 ? MIB : 1;
	run_heap("alternating 1 B / 1 MiB", s, n, T);
	for (size_t i = 0; i < n; i++)
		s[i] = i % 2 ? 0 : 20 * MIB; /* 0-byte ones too */
	run_heap("alternating 20 MiB / 0 B", s, 40, T);
	free(s);
}

/* a random mix (sizes log-uniform up to 1 MiB), redrawn per seed */
static void test_random_mix(void **state)
{
	const int64_t T = 4096;
	size_t n = 500, *s = malloc(n * sizeof(size_t));

	(void)state;
	for (size_t i = 0; i < n; i++)
		s[i] = (size_t)exp2((double)(rnd() % 20000) / 1000.0) - 1;
	run_heap("random log-uniform mix", s, n, T);
	free(s);
}

/* ---- P(sampled) through the real library ---- */

static void test_p_sampled(void **state)
{
	const int64_t T = 4096;
	static const struct {
		size_t r, n;
	} cases[] = { { 0, 2000000 }, { 1, 1000000 }, { 8, 250000 },
		      { 100, 30000 }, { 4096, 5000 }, { 256 * KIB, 1000 },
		      { 2 * MIB, 200 }, { 20 * MIB, 100 } };

	(void)state;
	set_period_now(T);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		double p = -expm1(-((double)cases[c].r + 1) / (double)T);
		double mu = p * (double)cases[c].n;
		double sigma = sqrt(mu * (1 - p));
		size_t hits = 0;

		for (size_t i = 0; i < cases[c].n; i++) {
			void *q = malloc(cases[c].r);

			hits += (uintptr_t)q - REG->region_start < REG->region_size;
			free(q);
		}
		printf("P(sampled) r=%-8zu T=%ld: %zu of %zu, expected %.1f +- %.1f\n",
		       cases[c].r, (long)T, hits, cases[c].n, mu, sigma);
		assert_true(fabs((double)hits - mu) <= Z_BOUND * sigma + 1);
	}
}

/* ---- the Go heap-profile seed (003) scenarios ---- */

/* Allocate n blocks of size, snapshot at once, check against truth with
 * the exact sigma; then free them all and check the profile drops them
 * at once.  Returns the estimate. */
static double go_scenario(const char *name, size_t n, size_t size, int64_t T)
{
	void **p = malloc(n * sizeof(void *));
	size_t *sizes = fill(n, size), *alloc = malloc(n * sizeof(size_t));
	struct heapscope_profile *prof;
	uint64_t seq0 = REG->next_seq;
	double est = 0, truth = 0, V, Vk;
	size_t left = 0;

	set_period_now(T);
	seq0 = REG->next_seq;
	for (size_t i = 0; i < n; i++) {
		p[i] = malloc(size);
		memset(p[i], 1, 64); /* "used" */
	}
	/* the profile right after the last allocation: no GC, no lag */
	assert_int_equal(heapscope_heap_profile(&prof), 0);
	for (size_t i = 0; i < prof->count; i++)
		if (prof->samples[i].seq >= seq0)
			est += (double)prof->samples[i].allocated *
			       (double)prof->samples[i].weight /
			       ((double)prof->samples[i].requested + 1);
	heapscope_profile_free(prof);
	for (size_t i = 0; i < n; i++) {
		alloc[i] = malloc_usable_size(p[i]);
		truth += (double)alloc[i];
	}
	exact_variance(sizes, alloc, n, T, &V, &Vk);
	printf("go seed: %-22s T=%-8ld true %.3f MiB, estimate %.3f MiB, "
	       "sigma %.3f MiB (bound sqrt(n(T^2-T)) %.3f, sqrt(T*M) %.3f), z=%+.2f\n",
	       name, (long)T, truth / MIB, est / MIB, sqrt(V) / MIB,
	       sqrt((double)n * ((double)T * T - T)) / MIB,
	       sqrt((double)T * truth) / MIB,
	       V > 0 ? (est - truth) / sqrt(V) : 0.0);
	if (T == 1)
		assert_true(est == truth); /* exact to the byte */
	else
		assert_true(fabs(est - truth) <= Z_BOUND * sqrt(V));
	for (size_t i = 0; i < n; i++)
		free(p[i]);
	assert_int_equal(heapscope_heap_profile(&prof), 0);
	for (size_t i = 0; i < prof->count; i++)
		left += prof->samples[i].seq >= seq0;
	heapscope_profile_free(prof);
	assert_int_equal(left, 0); /* frees show at once */
	free(p);
	free(sizes);
	free(alloc);
	return est;
}

static void test_go_seed(void **state)
{
	(void)state;
	/* several independent runs of each, every one within 5 sigma */
	for (int i = 0; i < 5; i++) {
		go_scenario("10 x 20 MiB", 10, 20 * MIB, 2 * (int64_t)MIB);
		go_scenario("1000 x 240 KiB", 1000, 240 * KIB, 2 * (int64_t)MIB);
	}
	go_scenario("10 x 20 MiB", 10, 20 * MIB, 1);
	go_scenario("1000 x 240 KiB", 1000, 240 * KIB, 1);
}

int main(int argc, char **argv)
{
	const char *e = getenv("HEAPSCOPE_TEST_SEED");
	char want[32];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_p_sampled),
		cmocka_unit_test(test_go_seed),
		cmocka_unit_test(test_single_1b),
		cmocka_unit_test(test_single_8b),
		cmocka_unit_test(test_single_24b),
		cmocka_unit_test(test_single_4k),
		cmocka_unit_test(test_single_240k),
		cmocka_unit_test(test_single_20m),
		cmocka_unit_test(test_periodic),
		cmocka_unit_test(test_class_edges),
		cmocka_unit_test(test_tiny_huge),
		cmocka_unit_test(test_random_mix),
	};

	if (e && *e)
		test_seed = strtoull(e, NULL, 0);
	/* the library reads HEAPSCOPE_SAMPLE_SEED at start-up: re-exec once
	 * with the seed derived from HEAPSCOPE_TEST_SEED */
	snprintf(want, sizeof(want), "%llu",
		 (unsigned long long)(test_seed * 2654435761ULL + 1));
	if (!getenv("HEAPSCOPE_SAMPLE_SEED") ||
	    strcmp(getenv("HEAPSCOPE_SAMPLE_SEED"), want) != 0) {
		setenv("HEAPSCOPE_SAMPLE_SEED", want, 1);
		execv("/proc/self/exe", argv);
		perror("execv");
		return 1;
	}
	(void)argc;
	if (getenv("HS_TEST_FILTER")) /* e.g. HS_TEST_FILTER='test_single_*' */
		cmocka_set_test_filter(getenv("HS_TEST_FILTER"));
	rng_state = test_seed ^ 0x51ed5eedULL;
	printf("HEAPSCOPE_TEST_SEED=%llu HEAPSCOPE_SAMPLE_SEED=%s\n",
	       (unsigned long long)test_seed, want);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
