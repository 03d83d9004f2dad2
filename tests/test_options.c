/* SPDX-License-Identifier: MIT */
/*
 * tests/test_options.c - HEAPSCOPE_<NAME> parsing from environ (suffixes,
 * negative values, bad values keep the default) and the hs_snprintf
 * subset used for logging.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/log.h"
#include "base/options.h"

static void test_defaults(void **state)
{
	(void)state;
	unsetenv("HEAPSCOPE_SAMPLE_RATE");
	unsetenv("HEAPSCOPE_SAMPLE_SEED");
	hs_options_init();
	assert_int_equal(hs_option_get(HS_OPT_SAMPLE_RATE), 2097152);
	assert_int_equal(hs_option_get(HS_OPT_SAMPLE_SEED), 0);
	assert_int_equal(hs_option_get(HS_OPT_VERBOSE), 0);
}

static void test_suffixes(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int64_t value;
	} cases[] = {
		{"0", 0},	    {"-1", -1},	       {"1", 1},
		{"512K", 524288},   {"4k", 4096},      {"2M", 2097152},
		{"1G", 1073741824}, {"3MiB", 3145728}, {"-2m", -2097152},
		{"+7", 7},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("HEAPSCOPE_SAMPLE_RATE", cases[i].text, 1);
		hs_options_init();
		assert_int_equal(hs_option_get(HS_OPT_SAMPLE_RATE),
				 cases[i].value);
	}
}

static void test_bad_value_keeps_previous(void **state)
{
	(void)state;
	setenv("HEAPSCOPE_SAMPLE_SEED", "42", 1);
	hs_options_init();
	assert_int_equal(hs_option_get(HS_OPT_SAMPLE_SEED), 42);
	static const char *bad[] = {"",	  "abc", "12x",
				    "1T", "K",	 "99999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("HEAPSCOPE_SAMPLE_SEED", bad[i], 1);
		hs_options_init();
		assert_int_equal(hs_option_get(HS_OPT_SAMPLE_SEED), 42);
	}
	/* a prefix of a name is not the name */
	setenv("HEAPSCOPE_SAMPLE_SEEDX", "5", 1);
	hs_options_init();
	assert_int_equal(hs_option_get(HS_OPT_SAMPLE_SEED), 42);
}

static void test_snprintf(void **state)
{
	(void)state;
	char buf[64];
	hs_snprintf(buf, sizeof(buf), "a%db%uc%ldd%zue%xf%sg%%", -5, 7u,
		    -1234567890123L, (size_t)99, 255u, "str");
	assert_string_equal(buf, "a-5b7c-1234567890123d99efffstrg%");
	hs_snprintf(buf, sizeof(buf), "%p", (void *)0x1000);
	assert_string_equal(buf, "0x1000");
	int n = hs_snprintf(buf, 5, "%s", "abcdefgh");
	assert_int_equal(n, 4);
	assert_string_equal(buf, "abcd");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_suffixes),
		cmocka_unit_test(test_bad_value_keeps_previous),
		cmocka_unit_test(test_snprintf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
