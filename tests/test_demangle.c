// SPDX-License-Identifier: MIT
/*
 * test_demangle.c - hs_demangle (collector/symbolize/demangle.c): C++,
 * Rust legacy and Rust v0 names demangled, C names left alone.  The
 * expected strings are the names as written in the source (C++ with its
 * parameter types; Rust paths without the legacy hash).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "symbolize.h"

static const struct {
	const char *mangled, *want; /* want NULL: not mangled */
} cases[] = {
	/* C++ member function in a namespace */
	{"_ZN3app5Table6insertEm", "app::Table::insert(unsigned long)"},
	/* C++ free function, template, operator new */
	{"_Z3fooiPKc", "foo(int, char const*)"},
	{"_Znwm", "operator new(unsigned long)"},
	{"_ZNSt6vectorIiSaIiEE9push_backERKi",
	 "std::vector<int, std::allocator<int> >::push_back(int const&)"},
	/* Rust legacy: the 17h<hash>E suffix is dropped */
	{"_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"},
	/* Rust v0 (RFC 2603's example) */
	{"_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar"},
	/* C names and what the symbolizer makes up stay as they are */
	{"malloc", NULL},
	{"main", NULL},
	{"_start", NULL},
	{"hold_100mib", NULL},
	{"libc.so.6+0x2a3f0", NULL},
	{"[unknown]", NULL},
	{"", NULL},
	/* not a valid mangling: kept */
	{"_Z", NULL},
	{"_ZN3app", NULL},
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = hs_demangle(cases[i].mangled);

		print_message("%s -> %s\n", cases[i].mangled,
			      got ? got : "(kept)");
		if (cases[i].want)
			assert_string_equal(got, cases[i].want);
		else
			assert_null(got);
		free(got);
	}
	assert_null(hs_demangle(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
