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

/*
 * Secure-execution mode (AT_SECURE): every HEAPSCOPE_* option keeps its
 * default and HEAPSCOPE_PROFILE_AT_EXIT reads as unset, even after a
 * normal scan had set them (docs/reliability.md).  The same environment
 * scanned normally sets every one (the control).  The end-to-end check,
 * a setuid program with the library in /etc/ld.so.preload, is
 * sec_setuid_preload (tests/test_secure_exec.sh).
 */
static void test_secure_mode_ignores_every_option(void **state)
{
	static const struct {
		hs_option_t opt;
		int64_t hostile, dflt; /* the defaults of docs/allocator.md */
	} cases[] = {
		{HS_OPT_SAMPLE_RATE, 1, 2097152},
		{HS_OPT_SAMPLE_SEED, 7, 0},
		{HS_OPT_VERBOSE, 2, 0},
		{HS_OPT_RELEASE_RATE, 0, 134217728},
		{HS_OPT_HUGEPAGE_AFTER, 0, -1},
		{HS_OPT_SAMPLED_CACHE, 0, 134217728},
		{HS_OPT_PROXY_MAX, 0, 4096},
		{HS_OPT_REGION_BLOCK_MAX, 0, 67108864},
	};
	char *env[] = {
		"PATH=/usr/bin",
		"HEAPSCOPE_SAMPLE_RATE=1",
		"HEAPSCOPE_SAMPLE_SEED=7",
		"HEAPSCOPE_VERBOSE=2",
		"HEAPSCOPE_RELEASE_RATE=0",
		"HEAPSCOPE_HUGEPAGE_AFTER=0",
		"HEAPSCOPE_SAMPLED_CACHE=0",
		"HEAPSCOPE_PROXY_MAX=0",
		"HEAPSCOPE_REGION_BLOCK_MAX=0",
		"HEAPSCOPE_PROFILE_AT_EXIT=/etc/passwd",
		NULL,
	};
	extern char **environ;
	const size_t n = sizeof(cases) / sizeof(cases[0]);

	(void)state;
	assert_int_equal(n, HS_OPT_COUNT); /* a new option needs a row here */
	hs_options_scan(env, false);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(hs_option_get(cases[i].opt), cases[i].hostile);
	assert_string_equal(hs_option_string(HS_SOPT_PROFILE_AT_EXIT),
			    "/etc/passwd");
	hs_options_scan(env, true);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(hs_option_get(cases[i].opt), cases[i].dflt);
	assert_null(hs_option_string(HS_SOPT_PROFILE_AT_EXIT));
	hs_options_scan(environ, false); /* back to this process's own */
	assert_null(hs_option_string(HS_SOPT_PROFILE_AT_EXIT));
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
		cmocka_unit_test(test_secure_mode_ignores_every_option),
		cmocka_unit_test(test_snprintf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
