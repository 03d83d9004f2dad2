// SPDX-License-Identifier: MIT
/*
 * tests/test_unwind_tables.c - a sampled capture gives back the pages of
 * unwind tables its rule lookups mapped (allocator/sampling/
 * unwind_tables.c), and never those of an object with text relocations.
 *
 * This program holds 2048 functions (tests/programs/unwind_tables_funcs.h),
 * so its .eh_frame_hdr and .eh_frame span ~16 pages; it is linked with the
 * real library and libut_textrel.so, 1024 more functions in an object with
 * DT_TEXTREL whose relocated pointer lies after its .eh_frame.  The range
 * a release takes is computed here from each object's program headers;
 * which of its pages are mapped, from /proc/self/pagemap.  Every
 * allocation is sampled (HEAPSCOPE_SAMPLE_RATE=1); a capture that looks
 * nothing up maps nothing, so the pages are counted after any.
 */
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#include <cmocka.h>

#include "heapscope/heapscope.h"
#include "unwind_tables_funcs.h"

#define OS_PAGE 4096u

UT_FUNCS512(f, 1)
UT_FUNCS512(f, 2)
UT_FUNCS512(f, 3)
UT_FUNCS512(f, 4)

static const ut_func_t funcs[] = {UT_PTRS512(f, 1) UT_PTRS512(f, 2)
					  UT_PTRS512(f, 3) UT_PTRS512(f, 4)};

/* libut_textrel.so (tests/programs/unwind_tables_lib.c) */
const ut_func_t *ut_lib_funcs(size_t *n);
const int *ut_textrel_get(void);
const void *ut_textrel_where(void);
extern int ut_textrel_target;

/* _Unwind_Find_FDE is libgcc's; its declaration is not in unwind.h */
struct dwarf_eh_bases {
	void *tbase, *dbase, *func;
};
const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

struct range {
	const void *in; /* an address of the object */
	uintptr_t lo, hi;
	int textrel;
};

/* The pages from the first wholly after the start of .eh_frame_hdr to
 * the end of the file-backed part of its read-only segment. */
static int range_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct range *r = arg;
	uintptr_t a = (uintptr_t)r->in, hdr = 0;
	int mine = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz)
			mine = 1;
		if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = lo;
		if (ph->p_type == PT_DYNAMIC) {
			const ElfW(Dyn) *d = (const ElfW(Dyn) *)lo;
			for (; d->d_tag != DT_NULL; d++)
				r->textrel |= d->d_tag == DT_TEXTREL;
		}
	}
	if (!mine || !hdr)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && !(ph->p_flags & (PF_W | PF_X)) &&
		    hdr >= lo && hdr < lo + ph->p_filesz) {
			r->lo = (hdr + OS_PAGE - 1) & ~(uintptr_t)(OS_PAGE - 1);
			r->hi = (lo + ph->p_filesz) & ~(uintptr_t)(OS_PAGE - 1);
		}
	}
	return 1;
}

static struct range tables_of(const void *in)
{
	struct range r = {in, 0, 0, 0};

	assert_int_equal(dl_iterate_phdr(range_of, &r), 1);
	return r;
}

/* Pages of r mapped in this process (present bit of /proc/self/pagemap). */
static size_t mapped_pages(struct range r)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	assert_true(fd >= 0);
	for (uintptr_t a = r.lo; a < r.hi; a += OS_PAGE) {
		uint64_t e = 0;
		assert_int_equal(pread(fd, &e, sizeof(e),
				       (off_t)(a / OS_PAGE * sizeof(e))),
				 (ssize_t)sizeof(e));
		n += e >> 63;
	}
	close(fd);
	return n;
}

/* Every function of f[0..n) once (the test runs with
 * HEAPSCOPE_SAMPLE_RATE=1: every allocation is sampled), then, past the
 * 100 ms between two releases, one capture more, whose release gives back
 * what the last ones mapped. */
static void call_all(const ut_func_t *f, size_t n)
{
	struct timespec pause = {0, 150 * 1000 * 1000};
	void *volatile last;

	assert_int_equal(heapscope_get_sample_period(), 1);
	for (size_t i = 0; i < n; i++)
		free(f[i](64));
	nanosleep(&pause, NULL);
	last = malloc(24); /* volatile: a malloc-free pair is optimised away */
	free(last);
}

/* The program's own tables: mapped by a lookup, given back by the
 * captures that looked rules up in them. */
static void test_program_tables_given_back(void **state)
{
	struct dwarf_eh_bases bases;
	struct range r = tables_of((const void *)funcs[0]);
	size_t n = sizeof(funcs) / sizeof(funcs[0]), before, after;

	(void)state;
	assert_false(r.textrel);
	print_message("tables: %zu pages\n", (size_t)(r.hi - r.lo) / OS_PAGE);
	assert_true(r.hi - r.lo >= 8 * OS_PAGE);
	/* a lookup of our own maps some of them (so the test can fail) */
	assert_non_null(_Unwind_Find_FDE((char *)funcs[n / 2] + 1, &bases));
	before = mapped_pages(r);
	call_all(funcs, n);
	after = mapped_pages(r);
	print_message("mapped: %zu after one lookup, %zu after %zu captures\n",
		      before, after, n);
	assert_true(before > 0);
	assert_int_equal(after, 0);
}

/* An object with text relocations keeps its pages, and its relocated
 * pointer (which lies in the range a release would take) its value. */
static void test_textrel_object_kept(void **state)
{
	size_t n;
	const ut_func_t *g = ut_lib_funcs(&n);
	struct range r = tables_of((const void *)g[0]);
	uintptr_t where = (uintptr_t)ut_textrel_where();
	size_t after;

	(void)state;
	assert_true(r.textrel);
	print_message("textrel object: tables %#lx-%#lx, pointer at %#lx\n",
		      (unsigned long)r.lo, (unsigned long)r.hi,
		      (unsigned long)where);
	assert_true(where >= r.lo && where < r.hi);
	assert_ptr_equal(ut_textrel_get(), &ut_textrel_target);
	call_all(g, n);
	after = mapped_pages(r);
	print_message("textrel object: %zu of %zu pages mapped after %zu "
		      "captures, pointer %p\n",
		      after, (size_t)(r.hi - r.lo) / OS_PAGE, n,
		      (const void *)ut_textrel_get());
	assert_ptr_equal(ut_textrel_get(), &ut_textrel_target);
	assert_int_equal(*ut_textrel_get(), 42);
	assert_true(after > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_program_tables_given_back),
		cmocka_unit_test(test_textrel_object_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
