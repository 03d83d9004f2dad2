// SPDX-License-Identifier: MIT
/*
 * tests/test_sampler.c - statistical and exact tests of allocator/sampler.c
 * (compiled into this test directly; what it needs from internal.h is
 * stubbed below).
 *
 * Statistics are tested as statistics: fixed seed (HEAPSCOPE_TEST_SEED
 * overrides it, so a checker can rerun with other seeds), stated sigma
 * bounds, Kolmogorov-Smirnov at significance 1e-6 (the battery is rerun
 * under many seeds, so every check must fail by chance less than ~1e-6).
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <cmocka.h>

#include "base/options.h"
#include "base/os.h"
#include "sampling/sampler.h"

/* ---- stubs of the allocator core ---- */

static int64_t stub_rate = 2097152;
static uint64_t test_seed = 0x5eedf00dULL;

int64_t hs_option_get(hs_option_t opt)
{
	switch (opt) {
	case HS_OPT_SAMPLE_RATE:
		return stub_rate;
	case HS_OPT_SAMPLE_SEED:
		return (int64_t)test_seed;
	default:
		return 0;
	}
}

uint32_t hs_gettid(void)
{
	return 1;
}

/* ---- helpers ---- */

#define MIB ((int64_t)1 << 20)

/* One allocation through the sampler as the core does it: fast path,
 * then the slow path.  Returns W (0 = not sampled); *slow counts slow
 * path entries. */
static size_t alloc_one(hs_sampler_t *s, size_t r, uint64_t *slow)
{
	if (hs_sampler_try_fast(s, r))
		return 0;
	if (slow)
		(*slow)++;
	return hs_sampler_record_slow(s, r);
}

static void fresh(hs_sampler_t *s, int64_t period)
{
	hs_sampler_set_period(period);
	memset(s, 0, sizeof(*s));
}

static double mean_of(const double *x, size_t n)
{
	double m = 0;

	for (size_t i = 0; i < n; i++)
		m += x[i];
	return m / (double)n;
}

static double var_of(const double *x, size_t n, double m)
{
	double v = 0;

	for (size_t i = 0; i < n; i++)
		v += (x[i] - m) * (x[i] - m);
	return v / (double)(n - 1);
}

/* ---- exact tests ---- */

/* First use: seed, draw, then apply the current request to the fresh
 * counter (TCMalloc RecordAllocationSlow initialisation). */
static void test_first_use(void **state)
{
	const int64_t T = 2 * MIB;
	const size_t sizes[] = { 0, 100, 5000, (size_t)(100 * T) };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		hs_sampler_t s;
		size_t r = sizes[i], k = r + 1, w, c, c2;
		uint64_t rng, idx;

		fresh(&s, T);
		idx = hs_sampler_seeded_count();
		assert_false(hs_sampler_try_fast(&s, r)); /* empty state */
		w = hs_sampler_record_slow(&s, r);
		assert_int_equal(hs_sampler_seeded_count(), idx + 1);

		rng = hs_sampler_initial_state(test_seed, idx);
		c = hs_sampler_draw(&rng, T);
		if (c >= k) {
			assert_int_equal(w, 0);
			assert_int_equal(s.bytes_until_sample, c - k);
		} else {
			assert_int_equal(w, (size_t)T + k - (c + 1));
			c2 = hs_sampler_draw(&rng, T);
			assert_int_equal(s.bytes_until_sample, c2);
		}
		if (r == (size_t)(100 * T))
			assert_true(w > 0); /* P(miss) = e^-100 */
		assert_int_equal(s.period, T);
	}
}

/* W = T + k - f on hand-made counters (f = c + 1, k = r + 1). */
static void test_weight_exact(void **state)
{
	const int64_t T = 4096;
	hs_sampler_t s;
	const size_t cs[] = { 0, 1, 7, 100, 4095, 100000 };
	const size_t rs[] = { 0, 1, 8, 99, 100, 4096, 262144, 1u << 30 };

	(void)state;
	fresh(&s, T);
	alloc_one(&s, 0, NULL); /* seed */
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		for (size_t j = 0; j < sizeof(rs) / sizeof(rs[0]); j++) {
			size_t c = cs[i], r = rs[j], k = r + 1;

			s.bytes_until_sample = c;
			if (c >= k) {
				assert_true(hs_sampler_try_fast(&s, r));
				assert_int_equal(s.bytes_until_sample, c - k);
				continue;
			}
			assert_false(hs_sampler_try_fast(&s, r));
			assert_int_equal(hs_sampler_record_slow(&s, r),
					 (size_t)T + k - (c + 1));
		}
	}
}

/* T = 1: every allocation sampled, W = r + 1 exactly. */
static void test_period_one(void **state)
{
	hs_sampler_t s;
	uint64_t x = 12345;

	(void)state;
	fresh(&s, 1);
	for (int i = 0; i < 100000; i++) {
		size_t r = (size_t)((x = hs_sampler_next_random(x)) >> 30);

		if (i % 1000 == 0)
			r = 0;
		assert_int_equal(alloc_one(&s, r, NULL), r + 1);
		assert_int_equal(s.bytes_until_sample, 0);
	}
}

/* T <= 0: never sampled, but the slow path comes every 128 MiB, and a
 * run-time change of the period is picked up there. */
static void test_period_off(void **state)
{
	const int64_t periods[] = { 0, -1, -((int64_t)1 << 40) };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		hs_sampler_t s;
		uint64_t slow = 0;
		size_t total = 0;

		fresh(&s, periods[i]);
		for (int j = 0; j < 200000; j++) {
			size_t r = j % 7 == 0 ? 1u << 20 : (size_t)j % 1000;

			assert_int_equal(alloc_one(&s, r, &slow), 0);
			total += r + 1;
		}
		/* first use + one per 128 MiB */
		assert_true(slow >= total / HS_SAMPLER_OFF_COUNTER);
		assert_true(slow <= total / HS_SAMPLER_OFF_COUNTER + 2);
		assert_int_equal(alloc_one(&s, (size_t)1 << 40, NULL), 0);

		/* switch on at run time: T = 1 takes effect at the next
		 * slow path, at most 128 MiB later */
		hs_sampler_set_period(1);
		total = 0;
		while (alloc_one(&s, 4096, NULL) == 0) {
			total += 4097;
			assert_true(total <= HS_SAMPLER_OFF_COUNTER + 4097);
		}
		assert_int_equal(s.period, 1);
		assert_int_equal(alloc_one(&s, 10, NULL), 11);
		/* and off again */
		hs_sampler_set_period(0);
		assert_int_equal(alloc_one(&s, 10, NULL), 0);
		assert_int_equal(s.bytes_until_sample, HS_SAMPLER_OFF_COUNTER - 11);
	}
}

/* ---- statistical tests ---- */

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Geometric CDF of the interval I: P(I <= n) = 1 - (1 - 1/T)^n. */
static double geo_cdf(double n, int64_t T)
{
	return -expm1(n * log1p(-1.0 / (double)T));
}

/*
 * Intervals I = c + 1 follow the geometric law of mean T (for large T the
 * exponential law 1 - e^(-x/T)): KS distance D over n = 100k draws below
 * the critical value 2.69/sqrt(n) (alpha = 1e-6, sqrt(-ln(alpha/2)/2);
 * conservative for a discrete law); mean within 5 sigma, sigma =
 * sqrt(T^2 - T)/sqrt(n).
 */
static void test_intervals_ks(void **state)
{
	const int64_t periods[] = { 2 * MIB, 1000, 16, 2 };
	const size_t n = 100000;
	size_t *iv = malloc(n * sizeof(*iv));

	(void)state;
	assert_non_null(iv);
	for (size_t p = 0; p < sizeof(periods) / sizeof(periods[0]); p++) {
		int64_t T = periods[p];
		uint64_t rng = hs_sampler_initial_state(test_seed, 1000 + p);
		double sum = 0, d = 0, dexp = 0, crit = 2.69 / sqrt((double)n);
		double sigma = sqrt((double)T * (double)T - (double)T) /
			       sqrt((double)n);

		for (size_t i = 0; i < n; i++) {
			iv[i] = hs_sampler_draw(&rng, T) + 1;
			sum += (double)iv[i];
		}
		qsort(iv, n, sizeof(*iv), cmp_size);
		for (size_t i = 0; i < n;) {
			size_t j = i;

			while (j < n && iv[j] == iv[i])
				j++;
			/* empirical CDF jumps from i/n to j/n at iv[i] */
			double lo = fabs((double)i / n -
					 geo_cdf((double)iv[i] - 1, T));
			double hi = fabs((double)j / n - geo_cdf((double)iv[i], T));

			d = fmax(d, fmax(lo, hi));
			if (T >= 1000)
				dexp = fmax(dexp,
					    fabs((double)j / n -
						 (1 - exp(-(double)iv[i] / T))));
			i = j;
		}
		printf("T=%ld: KS D=%.5f (crit %.5f), mean=%.2f (T %ld, 5 sigma %.2f)\n",
		       (long)T, d, crit, sum / n, (long)T, 5 * sigma);
		assert_true(d < crit);
		if (T >= 1000)
			assert_true(dexp < crit + 1.0 / T);
		assert_true(fabs(sum / n - (double)T) <= 5 * sigma);
	}
	free(iv);
}

/*
 * P(sampled) of an allocation of r bytes in a stream of equal requests is
 * 1 - (1 - 1/T)^(r+1) ~= 1 - e^(-(r+1)/T) (the difference is < 1e-9 here);
 * observed counts within 5 binomial sigmas (+1 for p ~ 0 or 1).
 */
static void test_p_sampled(void **state)
{
	const int64_t T = 65536;
	const size_t sizes[] = { 0, 1, 8, 100, 4096, 256 * 1024, 2 * 1024 * 1024 };
	const size_t n = 200000;

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		hs_sampler_t s;
		size_t r = sizes[i], hits = 0;
		double k = (double)r + 1, p = -expm1(-k / T), sigma;

		fresh(&s, T);
		for (size_t j = 0; j < n; j++)
			hits += alloc_one(&s, r, NULL) != 0;
		sigma = sqrt(n * p * (1 - p));
		printf("r=%zu: sampled %zu of %zu, expected %.2f +- %.2f\n", r,
		       hits, n, n * p, sigma);
		assert_true(fabs((double)hits - n * p) <= 5 * sigma + 1);
	}
}

/*
 * Unbiasedness and variance of M^ = sum W.  trials independent streams
 * (the sampler is memoryless, so consecutive segments of one stream are
 * independent trials).  Mean within 5 sigma of M (sigma from T*M).  Variance in
 * [T^2 - T, T*M], widened by 5 standard errors of the sample variance:
 * SE(s^2)/s^2 = sqrt((kurtosis - 1)/trials), kurtosis 3 for the
 * near-normal tiny-allocation sums, 9 for the geometric f of one huge
 * allocation (whose variance is exactly T^2 - T: checked too).
 */
static void check_sum_w(const char *what, const size_t *pattern, size_t plen,
			size_t reps, int64_t T, size_t trials, double kurt)
{
	hs_sampler_t s;
	double *x = malloc(trials * sizeof(*x)), m, v, M = 0, margin;

	assert_non_null(x);
	for (size_t j = 0; j < plen; j++)
		M += (double)(pattern[j] + 1);
	M *= (double)reps;
	fresh(&s, T);
	for (size_t t = 0; t < trials; t++) {
		double sum = 0;

		for (size_t i = 0; i < reps; i++)
			for (size_t j = 0; j < plen; j++)
				sum += (double)alloc_one(&s, pattern[j], NULL);
		x[t] = sum;
	}
	m = mean_of(x, trials);
	v = var_of(x, trials, m);
	margin = 5 * sqrt((kurt - 1) / (double)trials);
	printf("%s: T=%ld M=%.0f trials=%zu mean=%.1f (5 sigma %.1f) var=%.4g in [%.4g, %.4g]\n",
	       what, (long)T, M, trials, m, 5 * sqrt(v / trials), v,
	       ((double)T * T - T) * (1 - margin), (double)T * M * (1 + margin));
	assert_true(fabs(m - M) <= 5 * sqrt((double)T * M / (double)trials));
	assert_true(v >= ((double)T * T - T) * (1 - margin));
	assert_true(v <= (double)T * M * (1 + margin));
	free(x);
}

static void test_sum_w_tiny(void **state)
{
	const size_t one[] = { 0 }; /* 0-byte requests: k = 1, W = T */
	const size_t two[] = { 1 }; /* 1-byte requests: k = 2 */

	(void)state;
	check_sum_w("k=1 stream", one, 1, 65536, 1024, 2000, 3.2);
	check_sum_w("k=2 stream", two, 1, 32768, 1024, 2000, 3.2);
}

static void test_sum_w_huge(void **state)
{
	const int64_t T = 1024;
	const size_t huge[] = { 64 * 1024 - 1 }; /* k = M = 64 T */
	const size_t trials = 20000;
	hs_sampler_t s;
	double *x = malloc(trials * sizeof(*x)), m, v, want = (double)T * T - T;
	double margin = 5 * sqrt(8.0 / trials);

	(void)state;
	check_sum_w("huge alloc", huge, 1, 1, T, trials, 9);
	/* sharper: Var W = Var f = T^2 - T exactly */
	assert_non_null(x);
	fresh(&s, T);
	for (size_t t = 0; t < trials; t++)
		x[t] = (double)alloc_one(&s, huge[0], NULL);
	m = mean_of(x, trials);
	v = var_of(x, trials, m);
	printf("huge alloc: var=%.4g, T^2-T=%.4g +- %.1f%%\n", v, want,
	       100 * margin);
	assert_true(fabs(v - want) <= margin * want);
	free(x);
}

/* Memorylessness: mixed patterns stay unbiased. */
static void test_sum_w_patterns(void **state)
{
	const size_t mixed[] = { 0, 7, 100, 5000, 3 * 4096, 31, 1 << 16 };
	const size_t alt[] = { 4095, 0, 0, 0, 8191, 1 };

	(void)state;
	check_sum_w("mixed pattern", mixed, 7, 16, 4096, 4000, 9);
	check_sum_w("alternating", alt, 6, 64, 4096, 4000, 9);
}

/* The sampler's own ln and ln1p against libm's log and log1p: within
 * 2 ulp over the whole range the draw uses (q in [1, 2^26], y = -1/T
 * for T from 2 to 2^40) and over random doubles spanning 2^-60..2^60. */
static void assert_close(double got, double want)
{
	double tol = 2 * DBL_EPSILON * fabs(want);
	if (!(fabs(got - want) <= tol))
		fail_msg("got %.17g want %.17g", got, want);
}

static void test_own_log(void **state)
{
	(void)state;
	for (uint64_t q = 1; q <= (1u << 26); q = q * 3 / 2 + 1)
		assert_close(hs_sampler_ln((double)q), log((double)q));
	assert_close(hs_sampler_ln((double)(1u << 26)), log(1u << 26));
	assert_true(hs_sampler_ln(1.0) == 0.0);
	for (int64_t t = 2; t <= ((int64_t)1 << 40); t = t * 5 / 4 + 1)
		assert_close(hs_sampler_ln1p(-1.0 / (double)t),
			     log1p(-1.0 / (double)t));
	uint64_t x = test_seed;
	for (int i = 0; i < 100000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		double v = ldexp((double)(x >> 11) / 9007199254740992.0 + 0.5,
				 (int)(x % 121) - 60);
		assert_close(hs_sampler_ln(v), log(v));
	}
}

int main(void)
{
	const char *e = getenv("HEAPSCOPE_TEST_SEED");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_use),
		cmocka_unit_test(test_own_log),
		cmocka_unit_test(test_weight_exact),
		cmocka_unit_test(test_period_one),
		cmocka_unit_test(test_period_off),
		cmocka_unit_test(test_intervals_ks),
		cmocka_unit_test(test_p_sampled),
		cmocka_unit_test(test_sum_w_tiny),
		cmocka_unit_test(test_sum_w_huge),
		cmocka_unit_test(test_sum_w_patterns),
	};

	if (e && *e)
		test_seed = strtoull(e, NULL, 0);
	if (test_seed == 0)
		test_seed = 1;
	printf("HEAPSCOPE_TEST_SEED=%llu\n", (unsigned long long)test_seed);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
