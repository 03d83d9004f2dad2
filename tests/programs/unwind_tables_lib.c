// SPDX-License-Identifier: MIT
/*
 * tests/programs/unwind_tables_lib.c - the functions of the shared object
 * with text relocations (tests/test_unwind_tables.c): 1024 functions of
 * unwind_tables_funcs.h, compiled as position-independent code; the text
 * relocation is unwind_tables_textrel.c's.
 */
#include "unwind_tables_funcs.h"

UT_FUNCS512(g, 1)
UT_FUNCS512(g, 2)

static const ut_func_t funcs[] = {UT_PTRS512(g, 1) UT_PTRS512(g, 2)};

/* The n functions; n gets how many. */
const ut_func_t *ut_lib_funcs(size_t *n)
{
	*n = sizeof(funcs) / sizeof(funcs[0]);
	return funcs;
}

/* The text-relocated pointer (unwind_tables_textrel.c) as this object
 * sees it, through its GOT: a copy the program made would not be it. */
extern const struct ut_textrel ut_textrel;

const int *ut_textrel_get(void)
{
	return ut_textrel.ptr;
}

const void *ut_textrel_where(void)
{
	return &ut_textrel.ptr;
}
