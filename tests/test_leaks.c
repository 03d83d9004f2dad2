// SPDX-License-Identifier: MIT
/*
 * test_leaks.c - cmocka tests of the leak-trend view: the least-squares
 * growth and its standard errors against values worked out by hand
 * (leak_stats.c), the sampling variance of one sample against the
 * Horvitz-Thompson formula evaluated in long double, the score and the
 * "growing" verdict, and the store (leaks.c) with the report
 * (export_leaks.c) on three synthetic sites: a leak of 1.25 MiB/s, a
 * stable 64 MiB block and a churning FIFO ring of 32 MiB; plus the
 * store's bound on stacks and its eviction of the least suspect.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "export.h"
#include "profiles.h"

#define MIB (1024.0 * 1024.0)
#define P ((int64_t)2097152)
#define NS 1000000000ull

static void near(double got, double want, double rel)
{
	double tol = fabs(want) * rel + 1e-12;

	if (fabs(got - want) > tol)
		fail_msg("got %.12g, want %.12g (rel %g)", got, want, rel);
}

/* By hand: t 0..4, y 0 2 1 4 3, var 1: tbar 2, ybar 2, Sxx 10, Sxy 8,
 * slope 0.8, intercept 0.4, residuals -0.4 0.8 -1 1.2 -0.6 (RSS 3.6):
 * se_residual^2 = 3.6/3/10 = 0.12; se_sampling^2 = sum c_i^2 = 10/100. */
static void test_fit_by_hand(void **state)
{
	double t[] = {0, 1, 2, 3, 4}, y[] = {0, 2, 1, 4, 3},
	       v[] = {1, 1, 1, 1, 1};
	struct hs_leak_fit f;

	(void)state;
	assert_int_equal(hs_leak__fit(t, y, v, 5, &f), 0);
	assert_int_equal(f.points, 5);
	near(f.span_s, 4, 1e-15);
	near(f.slope, 0.8, 1e-12);
	near(f.se_residual, sqrt(0.12), 1e-12);
	near(f.se_sampling, sqrt(0.1), 1e-12);
	near(f.se, sqrt(0.22), 1e-12);
	near(f.t, 0.8 / sqrt(0.22), 1e-12);
}

/* Unequal spacing and variances: t 0 1 3, y 10 14 30, var 4 9 16.
 * tbar 4/3, Sxx = 16/9 + 1/9 + 25/9 = 42/9, Sxy = (-4/3)(-8) + (-1/3)(-4)
 * + (5/3)(12) = 32/3 + 4/3 + 20 = 32, slope 32 / (42/9) = 48/7;
 * c = (-4/3, -1/3, 5/3) * 9/42: se_sampling^2 = (16/9*4 + 1/9*9 +
 * 25/9*16) * 81/1764 = (64 + 9 + 400)/9 * 81/1764 = 473 * 9/1764. */
static void test_fit_weighted_by_hand(void **state)
{
	double t[] = {0, 1, 3}, y[] = {10, 14, 30}, v[] = {4, 9, 16};
	double slope = 48.0 / 7.0, a = 18.0 - slope * 4.0 / 3.0, rss = 0;
	struct hs_leak_fit f;

	(void)state;
	for (int i = 0; i < 3; i++)
		rss += (y[i] - a - slope * t[i]) * (y[i] - a - slope * t[i]);
	hs_leak__fit(t, y, v, 3, &f);
	near(f.slope, slope, 1e-12);
	near(f.se_sampling, sqrt(473.0 * 9.0 / 1764.0), 1e-12);
	near(f.se_residual, sqrt(rss / 1.0 / (42.0 / 9.0)), 1e-9);
}

/* A constant series is never growing, whatever its size or age; an
 * exact line with no noise has se 0 and t at the cap. */
static void test_fit_edges(void **state)
{
	double t[10], y[10], v[10];
	struct hs_leak_fit f;

	(void)state;
	for (int i = 0; i < 10; i++) {
		t[i] = i * 5.0;
		y[i] = 64 * MIB;
		v[i] = (double)P * (double)P;
	}
	hs_leak__fit(t, y, v, 10, &f);
	assert_true(f.slope == 0 && f.t == 0);
	assert_true(hs_leak__score(&f, 1e6) == 0);
	assert_false(hs_leak__growing(&f, 1e6));
	for (int i = 0; i < 10; i++) {
		y[i] = 1000 + 500 * t[i];
		v[i] = 0;
	}
	hs_leak__fit(t, y, v, 10, &f);
	near(f.slope, 500, 1e-12);
	assert_true(f.se < 1e-6);
	assert_true(f.t == HS_LEAK_T_CAP);
	/* one point: nothing to fit */
	hs_leak__fit(t, y, v, 1, &f);
	assert_true(f.slope == 0 && f.t == 0 && f.points == 1);
	assert_true(hs_leak__score(&f, 100) == 0);
}

/* Score = t * min(1, age / span); growing needs t >= 3 and age >= span/2. */
static void test_score(void **state)
{
	struct hs_leak_fit f = {
		.points = 20, .span_s = 20, .slope = 1e6, .t = 5};

	(void)state;
	near(hs_leak__score(&f, 40), 5, 1e-15);
	near(hs_leak__score(&f, 20), 5, 1e-15);
	near(hs_leak__score(&f, 4), 1, 1e-15);
	assert_true(hs_leak__growing(&f, 10));
	assert_false(hs_leak__growing(&f, 9.9)); /* young: a churning ring */
	f.t = 2.9;
	assert_false(hs_leak__growing(&f, 20));
	f.t = 5;
	f.points = 2;
	assert_false(hs_leak__growing(&f, 20));
	assert_true(hs_leak__score(&f, 20) == 0);
}

static struct hs_sample mk(uint64_t seq, uint64_t r, uint64_t a, uint64_t w,
			   uint64_t leaf, uint64_t t)
{
	struct hs_sample s = {.seq = seq,
			      .requested = r,
			      .allocated = a,
			      .weight = w,
			      .depth = 2,
			      .time_ns = t};

	s.stack[0] = leaf;
	s.stack[1] = 0x1000;
	return s;
}

/* w (w - k) * (a/k)^2, w = k / (1 - exp(-k/P)), in long double. */
static long double ht_var(long double r, long double a, long double period)
{
	long double k = r + 1, w = k / (1 - expl(-k / period));

	return w * (w - k) * (a / k) * (a / k);
}

static void test_sample_var(void **state)
{
	struct hs_sample small = mk(1, 99, 112, 2097152, 0x10, 1),
			 mid = mk(2, 1048575, 1048576, 2097152, 0x10, 1),
			 big = mk(3, 64 << 20, 64 << 20, (64 << 20) + 1, 0x10,
				  1),
			 compat = small;

	(void)state;
	near(hs_leak__sample_var(&small, P), (double)ht_var(99, 112, P), 1e-9);
	near(hs_leak__sample_var(&mid, P), (double)ht_var(1048575, 1048576, P),
	     1e-9);
	/* small blocks: about (a/k)^2 P^2; large ones about 0 */
	near(hs_leak__sample_var(&small, P),
	     (112.0 / 100) * (112.0 / 100) * (double)P * (double)P, 1e-4);
	assert_true(hs_leak__sample_var(&big, P) < 1e-6 * (double)P * P);
	/* every allocation sampled: no sampling noise */
	assert_true(hs_leak__sample_var(&small, 1) < 1e-30);
	/* compatible: x (x - a) from the estimate x = weight */
	compat.flags = HS_SAMPLE_COMPAT;
	compat.requested = compat.allocated = 100;
	compat.weight = 1000;
	near(hs_leak__sample_var(&compat, P), 1000.0 * 900.0, 1e-15);
}

/* Names of the synthetic leaves. */
static const char *sym(void *ctx, uint64_t addr)
{
	(void)ctx;
	switch (addr) {
	case 0x10:
		return "leak_site";
	case 0x20:
		return "stable_site";
	case 0x30:
		return "ring_site";
	case 0x1000:
		return "main";
	default:
		return NULL;
	}
}

static const struct hs_leak_row *row(const struct hs_leak_row *r, size_t n,
				     const char *stack)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].stack, stack))
			return &r[i];
	fail_msg("no row %s", stack);
	return NULL;
}

/*
 * Three sites, period 2 MiB, 64 KiB blocks (W = P: 2 MiB each) but the
 * stable block, points every second for 20 s:
 *   leak:   one sample every 1.6 s, never freed (1.25 MiB/s);
 *   stable: 64 MiB allocated at 0 (W = r + 1: exact);
 *   ring:   16 samples live, FIFO: one replaced every 0.125 s (32 MiB,
 *           each lives 2 s).
 * The leak ranks first and grows at 1.25 MiB/s within the error of 12
 * samples; the other two are not growing.
 */
static void test_three_sites(void **state)
{
	struct hs_profile *live = hs_profile__new();
	struct hs_leaks *l = hs_leaks__new(NS);
	struct hs_leak_series *ss;
	struct hs_leak_row *rows;
	size_t n, nr;
	uint64_t seq = 1, ring[16], ringn = 0, t0 = 1000 * NS;
	uint64_t next_leak = t0, next_ring = t0;
	struct hs_sample s;
	const struct hs_leak_row *lk, *st, *rg;

	(void)state;
	assert_non_null(live);
	assert_non_null(l);
	s = mk(seq++, 64 << 20, 64 << 20, (64 << 20) + 1, 0x20, t0);
	assert_int_equal(hs_profile__alloc(live, &s), 0);
	for (uint64_t now = t0; now <= t0 + 20 * NS; now += NS / 8) {
		while (next_leak <= now) {
			s = mk(seq++, 65535, 65536, P, 0x10, next_leak);
			assert_int_equal(hs_profile__alloc(live, &s), 0);
			next_leak += 16 * NS / 10;
		}
		while (next_ring <= now) {
			if (ringn == 16) {
				assert_int_equal(
					hs_profile__free_seq(live, ring[0]), 0);
				memmove(ring, ring + 1, 15 * sizeof(*ring));
				ringn--;
			}
			s = mk(seq, 65535, 65536, P, 0x30, next_ring);
			assert_int_equal(hs_profile__alloc(live, &s), 0);
			ring[ringn++] = seq++;
			next_ring += NS / 8;
		}
		assert_int_equal(hs_leaks__tick(l, live, P, now), 0);
	}
	assert_int_equal(hs_leaks__points(l), 21);
	assert_true(hs_leaks__bytes(l) <= HS_LEAK_BYTES_MAX);
	assert_int_equal(hs_leaks__copy(l, live, t0 + 20 * NS, &ss, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(hs_leaks__report(ss, n, sym, NULL, &rows, &nr), 0);
	assert_int_equal(nr, 3);
	if (getenv("HS_TEST_VERBOSE"))
		hs_leaks__write_json(stderr, 1, 20, 1, 2097152, rows, nr);
	lk = row(rows, nr, "main;leak_site");
	st = row(rows, nr, "main;stable_site");
	rg = row(rows, nr, "main;ring_site");
	assert_ptr_equal(lk, &rows[0]);
	assert_true(lk->growing);
	/* 13 samples of 2 MiB by 19.2 s: within 3 se of 1.25 MiB/s */
	assert_true(fabs(lk->fit.slope - 1.25 * MIB) <= 3 * lk->fit.se);
	near(lk->inuse, 13 * 2 * MIB, 1e-12);
	near(lk->oldest_age_s, 20, 1e-12);
	assert_false(st->growing);
	assert_true(st->fit.slope == 0 && st->score == 0);
	near(st->inuse, 64 * MIB, 1e-12);
	assert_false(rg->growing);
	near(rg->inuse, 32 * MIB, 1e-12);
	assert_true(rg->oldest_age_s <= 2.0);
	assert_true(rg->score < lk->score);
	hs_leak_rows__free(rows, nr);
	hs_leak_series__free(ss, n);
	hs_leaks__free(l);
	hs_profile__free(live);
}

/* More stacks than HS_LEAK_MAX_STACKS: the store keeps its bound; a new
 * large stack takes the place of the least suspect small one once those
 * have points enough; a growing one and one too new to judge are kept. */
static void test_bound_and_eviction(void **state)
{
	struct hs_profile *live = hs_profile__new();
	struct hs_leaks *l = hs_leaks__new(NS);
	struct hs_leak_series *ss;
	uint64_t seq = 1, now = 1000 * NS;
	size_t n;
	bool big = false, grower = false;
	struct hs_sample s;

	(void)state;
	/* a growing stack first, then 100 static small ones */
	for (int i = 0; i < 101; i++) {
		s = mk(seq++, 65535, 65536, P, 0x100 + (uint64_t)i, now);
		hs_profile__alloc(live, &s);
	}
	for (int k = 0; k < 10; k++, now += NS) {
		s = mk(seq++, 65535, 65536, P, 0x100, now);
		hs_profile__alloc(live, &s);
		assert_int_equal(hs_leaks__point(l, live, P, now), 0);
	}
	assert_true(hs_leaks__bytes(l) <= HS_LEAK_BYTES_MAX);
	s = mk(seq++, 1 << 30, 1 << 30, (1u << 30) + 1, 0x999, now);
	hs_profile__alloc(live, &s);
	assert_int_equal(hs_leaks__point(l, live, P, now), 0);
	assert_int_equal(hs_leaks__copy(l, live, now, &ss, &n), 0);
	assert_int_equal(n, HS_LEAK_MAX_STACKS);
	for (size_t i = 0; i < n; i++) {
		big |= ss[i].stack[0] == 0x999;
		grower |= ss[i].stack[0] == 0x100;
	}
	assert_true(big);
	assert_true(grower);
	hs_leak_series__free(ss, n);
	/* 70 more stacks, each larger than any tracked: they take every
	 * place but the growing one's and the 1 GiB newcomer's (too new) */
	now += NS;
	for (int i = 0; i < 70; i++) {
		s = mk(seq++, 1 << 30, 1 << 30, (1u << 30) + 1,
		       0x2000 + (uint64_t)i, now);
		hs_profile__alloc(live, &s);
	}
	assert_int_equal(hs_leaks__point(l, live, P, now), 0);
	assert_int_equal(hs_leaks__copy(l, live, now, &ss, &n), 0);
	assert_int_equal(n, HS_LEAK_MAX_STACKS);
	big = grower = false;
	for (size_t i = 0; i < n; i++) {
		big |= ss[i].stack[0] == 0x999;
		grower |= ss[i].stack[0] == 0x100;
		assert_true(ss[i].stack[0] == 0x100 ||
			    ss[i].stack[0] == 0x999 ||
			    ss[i].stack[0] >= 0x2000);
	}
	assert_true(big);
	assert_true(grower);
	hs_leak_series__free(ss, n);
	hs_leaks__free(l);
	hs_profile__free(live);
}

/* The JSON of one row: the fields the issue names, in order. */
static void test_json(void **state)
{
	struct hs_leak_row r = {.stack = "main;a\"b",
				.inuse = 1048576,
				.oldest_age_s = 12.5,
				.growing = true,
				.fit = {.slope = 1310720, .points = 4}};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_int_equal(hs_leaks__write_json(f, 42, 20, 1, 524288, &r, 1), 0);
	fclose(f);
	assert_non_null(
		strstr(text, "{\"pid\": 42, \"window_seconds\": 20.000"));
	assert_non_null(strstr(text, "{\"stack\": \"main;a\\\"b\", "
				     "\"growth_bytes_per_second\": 1310720.0, "
				     "\"inuse_bytes\": 1048576, "
				     "\"oldest_live_age_seconds\": 12.500"));
	assert_non_null(strstr(text, "\"growing\": true"));
	assert_non_null(strstr(text, "\"sampling_period_bytes\": 524288, "));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_by_hand),
		cmocka_unit_test(test_fit_weighted_by_hand),
		cmocka_unit_test(test_fit_edges),
		cmocka_unit_test(test_score),
		cmocka_unit_test(test_sample_var),
		cmocka_unit_test(test_three_sites),
		cmocka_unit_test(test_bound_and_eviction),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
