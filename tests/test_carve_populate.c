/* SPDX-License-Identifier: MIT */
/*
 * tests/test_carve_populate.c - carving a span the page heap handed out
 * untouched faults its pages in with one MADV_POPULATE_WRITE call
 * (core/central_freelist.c, populate_carve; base/os.c,
 * hs_os_populate_write), and only the pages it should:
 *
 * - an object of a class of at most 16 KiB (POPULATE_WHOLE) is resident
 *   whole before the program writes it (carving alone writes its first
 *   word: an 11264-byte object's two other pages were not resident);
 * - an object of a class above that has only its first page resident,
 *   the one carving writes;
 * - the span's pages past the objects carved stay not resident;
 * - where a seccomp filter refuses the advice (EPERM, as sandboxes such
 *   as Chromium's do for advice they do not list), malloc works and
 *   carving is back to writing links only: the object's later pages are
 *   not resident.
 *
 * Each case uses a class nothing in this process touched before, and
 * frees nothing, so its span is a new one from memory the page heap has
 * never handed out (mincore tells what is resident; the expected pages
 * are computed here from the class size, not by the code under test).
 * Linked with libheapscope.a, sampling off.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "core/init.h"
#include "core/size_class.h"

#define PG 4096u

static int setup(void **state)
{
	(void)state;
	hs_init_global();
	return 0;
}

/* Resident 4 KiB pages among the npages from p (page aligned). */
static size_t resident(const void *p, size_t npages, unsigned char *vec)
{
	assert_int_equal(mincore((void *)p, npages * PG, vec), 0);
	size_t n = 0;
	for (size_t i = 0; i < npages; i++)
		n += vec[i] & 1;
	return n;
}

static size_t class_size(size_t n)
{
	return hs_classes[hs_size_to_class(n)].size;
}

/* malloc(n) of a class not used before: the first object of a new span,
 * carved alone (a thread's first refill of a class over 1 KiB takes one
 * object), not written by the test. */
static char *fresh_object(size_t n)
{
	char *p = malloc(n);
	assert_non_null(p);
	/* the first object of its span: spans start on 8 KiB pages */
	assert_int_equal((uintptr_t)p % 8192, 0);
	return p;
}

static void test_whole_object_resident(void **state)
{
	(void)state;
	size_t size = class_size(11200); /* gawk's node pools: 11264 */
	assert_int_equal(size, 11264);
	char *p = fresh_object(11200);
	size_t pages = (size + PG - 1) / PG; /* 3 */
	unsigned char vec[64];
	assert_int_equal(resident(p, pages, vec), pages);

	/* past the object's last page, up to the span's end: the next
	 * objects are not carved yet, so not resident */
	const hs_class_info_t *ci = &hs_classes[hs_size_to_class(11200)];
	size_t span = (size_t)ci->pages * 8192;
	size_t from = pages * PG, rest = (span - from) / PG;
	assert_true(rest > 0 && rest <= sizeof(vec));
	assert_int_equal(resident(p + from, rest, vec), 0);
	/* not freed: its span could go back to the page heap, committed,
	 * and be the next case's */
}

static void test_big_object_first_page(void **state)
{
	(void)state;
	size_t size = class_size(40000);
	assert_true(size > 16384 && size % PG == 0);
	char *p = fresh_object(40000);
	size_t pages = size / PG;
	unsigned char vec[64];
	assert_true(pages <= sizeof(vec));
	assert_int_equal(resident(p, 1, vec), 1);
	assert_int_equal(resident(p + PG, pages - 1, vec), 0);
}

#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "the native audit arch of this machine"
#endif

/* madvise(..., MADV_POPULATE_WRITE) of this architecture's system
 * calls fails with EPERM, every other system call is allowed. */
static int refuse_populate(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_madvise, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_POPULATE_WRITE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* In a child (the filter cannot be taken off): exit status 0 when all
 * holds, else the number of the check that failed. */
static int refused_child(void)
{
	if (refuse_populate() != 0)
		return 10;
	size_t size = class_size(9000); /* 9216: 3 pages, 2 not written */
	if (size != 9216)
		return 11;
	char *p = malloc(9000);
	if (!p || (uintptr_t)p % 8192 != 0)
		return 12;
	unsigned char vec[4];
	if (mincore(p, 3 * PG, vec) != 0)
		return 13;
	if (!(vec[0] & 1) || (vec[1] & 1) || (vec[2] & 1))
		return 14; /* the link's page only */
	/* the allocator goes on working: objects of the class, written */
	char *q[64];
	for (int i = 0; i < 64; i++) {
		q[i] = malloc(9000);
		if (!q[i])
			return 15;
		memset(q[i], i, 9000);
	}
	for (int i = 0; i < 64; i++) {
		if (q[i][0] != (char)i || q[i][8999] != (char)i)
			return 16;
		free(q[i]);
	}
	free(p);
	return 0;
}

static void test_refused_advice(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(refused_child());
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: nothing has gone back to the page heap yet,
		 * so its child's span is a fresh one */
		cmocka_unit_test(test_refused_advice),
		cmocka_unit_test(test_whole_object_resident),
		cmocka_unit_test(test_big_object_first_page),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
