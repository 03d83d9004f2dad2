// SPDX-License-Identifier: MIT
/*
 * test_oom_pick.c - cmocka tests of the rule a PSI wake-up follows
 * (collector/daemon/oom_pick.c, hs_oom__psi_pick): the process whose
 * cgroup is nearest its limit, at half of it or more, wins over a larger
 * heap far from its own limit (commit 52d4a53); below half everywhere,
 * the largest heap; processes in cooldown are not candidates; a process
 * just captured over the threshold blocks the PSI snapshot when it is the
 * one chosen; a process without a known limit is never "near".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "oom.h"

#define MiB (1ull << 20)

static struct hs_oom_cand cand(double inuse, uint64_t usage, uint64_t limit)
{
	return (struct hs_oom_cand){
		.inuse = inuse, .usage = usage, .limit = limit, .cooled = true};
}

static void test_near_beats_large(void **state)
{
	/* 0: a 200 MiB heap at 20 % of 1 GiB; 1: 12 MiB at 75 % of 64 MiB;
	 * 2: no cgroup limit, the largest heap */
	struct hs_oom_cand c[3] = {
		cand(200.0 * MiB, 205 * MiB, 1024 * MiB),
		cand(12.0 * MiB, 48 * MiB, 64 * MiB),
		cand(900.0 * MiB, 0, 0),
	};

	(void)state;
	assert_int_equal(hs_oom__psi_pick(c, 3), 1);
	/* the nearest of two near ones */
	c[0].usage = 800 * MiB; /* 78 % */
	assert_int_equal(hs_oom__psi_pick(c, 3), 0);
	c[1].usage = 60 * MiB; /* 94 % */
	assert_int_equal(hs_oom__psi_pick(c, 3), 1);
}

static void test_none_near(void **state)
{
	/* all under half their limits: the largest heap */
	struct hs_oom_cand c[3] = {
		cand(200.0 * MiB, 205 * MiB, 1024 * MiB),
		cand(12.0 * MiB, 31 * MiB, 64 * MiB), /* 48 % */
		cand(90.0 * MiB, 0, 0),
	};

	(void)state;
	assert_int_equal(hs_oom__psi_pick(c, 3), 0);
	/* exactly half counts as near */
	c[1].usage = 32 * MiB;
	assert_int_equal(hs_oom__psi_pick(c, 3), 1);
	assert_int_equal(hs_oom__psi_pick(c, 0), -1);
}

static void test_cooldown_and_captured(void **state)
{
	struct hs_oom_cand c[2] = {
		cand(200.0 * MiB, 205 * MiB, 1024 * MiB),
		cand(12.0 * MiB, 48 * MiB, 64 * MiB),
	};

	(void)state;
	/* the near one in its cooldown: not a candidate, the large one */
	c[1].cooled = false;
	assert_int_equal(hs_oom__psi_pick(c, 2), 0);
	/* the near one captured this period (over the threshold): the
	 * pressure is its; no bystander is snapshotted */
	c[1].cooled = true;
	c[1].captured = true;
	assert_int_equal(hs_oom__psi_pick(c, 2), -1);
	/* the largest captured, none near: nothing either */
	c[1] = cand(12.0 * MiB, 1 * MiB, 64 * MiB);
	c[0].captured = true;
	assert_int_equal(hs_oom__psi_pick(c, 2), -1);
	/* everyone cooling down */
	c[0].cooled = c[1].cooled = false;
	assert_int_equal(hs_oom__psi_pick(c, 2), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_near_beats_large),
		cmocka_unit_test(test_none_near),
		cmocka_unit_test(test_cooldown_and_captured),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
