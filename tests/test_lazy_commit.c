/* SPDX-License-Identifier: MIT */
/*
 * tests/test_lazy_commit.c - the page heap's chunks (hs_lazy_init_heap,
 * base/os.h) follow the kernel's overcommit policy and the data limit:
 * under the heuristic (0) and always (1) policies with RLIMIT_DATA
 * unlimited they are writable from the start and charged to none
 * (MAP_NORESERVE), so growing them makes no mprotect call; under strict
 * overcommit (2), or with a data limit, they are PROT_NONE and each
 * commit step is made writable and accounted.  The other reservations
 * (hs_lazy_init: the registry, the region's index) are PROT_NONE under
 * every policy.  Linked with libheapscope.a.
 *
 * The expectation is computed from the knob and the limit, read here,
 * and checked against the kernel's own account of each mapping in
 * /proc/self/smaps: its permissions and VmFlags ("nr": VM_NORESERVE,
 * "ac": VM_ACCOUNT).
 *
 *   test_lazy_commit        under the host's policy
 *   test_lazy_commit 2      asserts the policy is 2 (run by
 *                           with_overcommit 2, tests/sizes.cmake)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <cmocka.h>

#include "base/os.h"

#define MIB ((size_t)1 << 20)

static int policy = -1;	  /* vm.overcommit_memory at the start */
static bool data_limited; /* RLIMIT_DATA is set */

/* Permissions ("rw-p") and VmFlags of the mapping holding addr, from
 * /proc/self/smaps; false when no mapping holds it. */
static bool vma_of(const void *addr, char perm[5], char *flags, size_t fn)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	assert_non_null(f);
	char line[512];
	bool in = false, found = false;
	uintptr_t a = (uintptr_t)addr;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char p[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, p) == 3 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			if (in)
				memcpy(perm, p, 5), perm[4] = '\0';
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			snprintf(flags, fn, "%s", line + 8);
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

static bool has_flag(const char *flags, const char *fl)
{
	char want[8];
	snprintf(want, sizeof(want), " %s", fl);
	for (const char *s = flags; (s = strstr(s, want)); s++)
		if (s[3] == ' ' || s[3] == '\n' || s[3] == '\0')
			return true;
	return false;
}

/* what hs_lazy_init_heap should do, from the policy and the limit */
static bool uncharged(void)
{
	return (policy == 0 || policy == 1) && !data_limited;
}

/* A reservation of 64 MiB, then a commit of 1 MiB in 2 MiB steps;
 * eager: made by hs_lazy_init_heap and expected writable at once. */
static void check_reservation(hs_lazy_t *l, bool eager, const char *what)
{
	char perm[5], flags[256];
	assert_int_equal((uintptr_t)l->base % (2 * MIB), 0);
	assert_int_equal(l->committed, 0);
	assert_int_equal(l->writable, eager);

	assert_true(vma_of(l->base + 32 * MIB, perm, flags, sizeof(flags)));
	printf("%s, policy %d%s, reserved: %s%s", what, policy,
	       data_limited ? ", data limit" : "", perm, flags);
	if (eager) {
		assert_string_equal(perm, "rw-p");
		assert_true(has_flag(flags, "nr"));
		assert_false(has_flag(flags, "ac"));
	} else {
		assert_string_equal(perm, "---p");
		assert_false(has_flag(flags, "ac"));
	}

	/* [0, 2 MiB) writable */
	assert_int_equal(hs_lazy_commit(l, MIB, 2 * MIB), 0);
	assert_int_equal(l->committed, 2 * MIB);
	l->base[0] = 1;
	l->base[2 * MIB - 1] = 1;
	assert_true(vma_of(l->base, perm, flags, sizeof(flags)));
	printf("%s, committed: %s%s", what, perm, flags);
	assert_string_equal(perm, "rw-p");
	if (eager) {
		assert_true(has_flag(flags, "nr"));
		assert_false(has_flag(flags, "ac"));
	} else {
		/* accounted (VM_ACCOUNT) as a new writable mapping is */
		assert_true(has_flag(flags, "ac"));
		/* the rest is still address space only */
		assert_true(
			vma_of(l->base + 2 * MIB, perm, flags, sizeof(flags)));
		assert_string_equal(perm, "---p");
	}
	/* beyond the reservation: refused either way */
	assert_int_equal(hs_lazy_commit(l, 64 * MIB + 1, 2 * MIB), -ENOMEM);
	assert_int_equal(l->committed, 2 * MIB);
	hs_os_unmap(l->base, l->size);
}

static void test_heap_reservation_follows_policy(void **state)
{
	(void)state;
	hs_lazy_t l;
	assert_int_equal(hs_lazy_init_heap(&l, 64 * MIB, 2 * MIB), 0);
	check_reservation(&l, uncharged(), "heap");
}

static void test_table_reservation_commits_by_steps(void **state)
{
	(void)state;
	hs_lazy_t l;
	assert_int_equal(hs_lazy_init(&l, 64 * MIB, 2 * MIB), 0);
	check_reservation(&l, false, "table");
}

/* The page heap grows in such a reservation: the span of a small block
 * lies in a mapping the policy charges as above. */
static void test_page_heap_memory_follows_policy(void **state)
{
	(void)state;
	char perm[5], flags[256];
	char *p = malloc(100);
	assert_non_null(p);
	p[0] = 1;
	assert_true(vma_of(p, perm, flags, sizeof(flags)));
	printf("policy %d, page heap: %s%s", policy, perm, flags);
	assert_string_equal(perm, "rw-p");
	assert_int_equal(has_flag(flags, "nr"), uncharged());
	assert_int_equal(has_flag(flags, "ac"), !uncharged());
	free(p);
}

int main(int argc, char **argv)
{
	FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
	if (!f || fscanf(f, "%d", &policy) != 1) {
		fprintf(stderr, "cannot read vm.overcommit_memory\n");
		return 1;
	}
	fclose(f);
	struct rlimit data;
	if (getrlimit(RLIMIT_DATA, &data) != 0) {
		perror("getrlimit");
		return 1;
	}
	data_limited = data.rlim_cur != RLIM_INFINITY;
	if (argc > 1 && policy != atoi(argv[1])) {
		fprintf(stderr, "vm.overcommit_memory is %d, not %s\n", policy,
			argv[1]);
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heap_reservation_follows_policy),
		cmocka_unit_test(test_table_reservation_commits_by_steps),
		cmocka_unit_test(test_page_heap_memory_follows_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
