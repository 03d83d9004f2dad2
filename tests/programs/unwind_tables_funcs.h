/* SPDX-License-Identifier: MIT */
/*
 * tests/programs/unwind_tables_funcs.h - many small functions, each with
 * an FDE of its own and a return address of its own after a malloc call,
 * so that their unwind tables span many pages (tests/test_unwind_tables.c).
 *
 *   UT_FUNCS512(f, 1)  defines f1000 .. f1777 (512 functions, octal names)
 *   UT_PTRS512(f, 1)   lists them, each followed by a comma
 *
 * Each takes a size, mallocs it (plus a little, so the calls differ) and
 * returns the block; the empty asm after the call keeps it from being a
 * tail call, so the function's frame is on the stack when malloc runs.
 */
#ifndef UNWIND_TABLES_FUNCS_H
#define UNWIND_TABLES_FUNCS_H

#include <stdlib.h>

#define UT_FUNC(p, i)                                                          \
	__attribute__((noinline)) void *p##i(size_t n)                         \
	{                                                                      \
		void *q = malloc(n + (i % 7));                                 \
		__asm__ volatile("" ::: "memory");                             \
		return q;                                                      \
	}
#define UT_FUNCS8(p, i)                                                        \
	UT_FUNC(p, i##0)                                                       \
	UT_FUNC(p, i##1) UT_FUNC(p, i##2) UT_FUNC(p, i##3) UT_FUNC(p, i##4)    \
		UT_FUNC(p, i##5) UT_FUNC(p, i##6) UT_FUNC(p, i##7)
#define UT_FUNCS64(p, i)                                                       \
	UT_FUNCS8(p, i##0)                                                     \
	UT_FUNCS8(p, i##1) UT_FUNCS8(p, i##2) UT_FUNCS8(p, i##3)               \
		UT_FUNCS8(p, i##4) UT_FUNCS8(p, i##5) UT_FUNCS8(p, i##6)       \
			UT_FUNCS8(p, i##7)
#define UT_FUNCS512(p, i)                                                      \
	UT_FUNCS64(p, i##0)                                                    \
	UT_FUNCS64(p, i##1) UT_FUNCS64(p, i##2) UT_FUNCS64(p, i##3)            \
		UT_FUNCS64(p, i##4) UT_FUNCS64(p, i##5) UT_FUNCS64(p, i##6)    \
			UT_FUNCS64(p, i##7)

#define UT_PTR(p, i) p##i,
#define UT_PTRS8(p, i)                                                         \
	UT_PTR(p, i##0)                                                        \
	UT_PTR(p, i##1) UT_PTR(p, i##2) UT_PTR(p, i##3) UT_PTR(p, i##4)        \
		UT_PTR(p, i##5) UT_PTR(p, i##6) UT_PTR(p, i##7)
#define UT_PTRS64(p, i)                                                        \
	UT_PTRS8(p, i##0)                                                      \
	UT_PTRS8(p, i##1) UT_PTRS8(p, i##2) UT_PTRS8(p, i##3)                  \
		UT_PTRS8(p, i##4) UT_PTRS8(p, i##5) UT_PTRS8(p, i##6)          \
			UT_PTRS8(p, i##7)
#define UT_PTRS512(p, i)                                                       \
	UT_PTRS64(p, i##0)                                                     \
	UT_PTRS64(p, i##1) UT_PTRS64(p, i##2) UT_PTRS64(p, i##3)               \
		UT_PTRS64(p, i##4) UT_PTRS64(p, i##5) UT_PTRS64(p, i##6)       \
			UT_PTRS64(p, i##7)

typedef void *(*ut_func_t)(size_t);

/* unwind_tables_textrel.c's relocated pointer, followed by padding */
struct ut_textrel {
	const int *ptr;
	char pad[16384];
};

#endif
