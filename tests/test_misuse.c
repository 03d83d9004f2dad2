/* SPDX-License-Identifier: MIT */
/*
 * tests/test_misuse.c - misuse the allocator can see (issue 7 item 6):
 * freeing a pointer it does not own, an interior pointer of a large
 * block, realloc of such pointers, a sampled pointer freed twice or
 * through an interior address.  Each case runs in a child whose stderr
 * is captured: the report must name the address, appear once, and the
 * child must go on allocating with every invariant checker passing
 * (linked with libheapscope.a so the internal checkers are reachable).
 *
 * Not detected, and so not tested here (see docs/reliability.md): a
 * double free or an interior pointer of a small, unsampled object.
 */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/central_freelist.h"
#include "core/page_heap.h"
#include "region/pages.h"
#include "sampling.h"
#include <heapscope/heapscope.h>

#pragma GCC diagnostic ignored "-Wfree-nonheap-object"
#pragma GCC diagnostic ignored "-Wuse-after-free"

static size_t opaque(size_t n)
{
	volatile size_t v = n;
	return v;
}

/* allocate and free a mixed workload, then run every checker; exits
 * 3 when a checker fails */
static void churn_and_check(void)
{
	void *ps[512];
	for (int r = 0; r < 4; r++) {
		for (int i = 0; i < 512; i++) {
			size_t n = (size_t)(i * 37 % 5000) + (i % 64 == 0) * 400000;
			ps[i] = malloc(opaque(n));
			if (!ps[i])
				_exit(4);
			memset(ps[i], i, n);
		}
		for (int i = 0; i < 512; i++)
			free(ps[i]);
	}
	if (!hs_page_heap_is_valid() || !hs_central_is_valid() ||
	    heapscope_sampled_check() != 0)
		_exit(3);
}

/* runs fn in a child with stderr captured into buf; returns its status */
static int run_child(void (*fn)(char *addr), char *buf, size_t cap,
		     char *addr)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		fn(addr);
		churn_and_check();
		_exit(0);
	}
	close(fds[1]);
	size_t len = 0;
	ssize_t r;
	while (len + 1 < cap && (r = read(fds[0], buf + len, cap - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = 0;
	close(fds[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* the child publishes the address it misuses through a shared page */
static char *shared;

static void expect_one_report(void (*fn)(char *addr), const char *what)
{
	char err[8192];
	int st = run_child(fn, err, sizeof(err), shared);
	print_message("%s: %s", what, err);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(shared[0] != 0);
	/* the address, once */
	assert_int_equal(count(err, shared), 1);
	assert_true(count(err, "heapscope:") >= 1);
}

static void publish(char *addr, const void *p)
{
	snprintf(addr, 64, "%p", p);
}

static char not_heap[256];

static void case_static(char *addr)
{
	publish(addr, not_heap + 16);
	free(not_heap + 16);
	free(not_heap + 32); /* one warning per process */
	if (malloc_usable_size(not_heap) != 0)
		_exit(5);
}

static void case_mmap(char *addr)
{
	char *m = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	publish(addr, m + 64);
	free(m + 64);
}

static void case_large_interior(char *addr)
{
	char *big = malloc(opaque(1 << 20));
	memset(big, 7, 1 << 20);
	publish(addr, big + 8192);
	free(big + 8192);
	if (big[0] != 7 || big[(1 << 20) - 1] != 7)
		_exit(6);
	free(big); /* still live, still freeable */
}

static void case_realloc_interior(char *addr)
{
	/* last page of a large span: copying the span's size from here
	 * would read past its end */
	char *big = malloc(opaque(1 << 20));
	char *in = big + (1 << 20) - 4096;
	publish(addr, in);
	errno = 0;
	if (realloc(in, opaque(3 << 20)) != NULL || errno != ENOMEM)
		_exit(7);
	free(big);
}

static void case_realloc_foreign(char *addr)
{
	publish(addr, not_heap + 64);
	errno = 0;
	if (realloc(not_heap + 64, 100) != NULL || errno != ENOMEM)
		_exit(8);
}

/* a sampled block of n bytes: period 1, after one big block that uses up
 * whatever counter the thread had (128 MiB when sampling was off) */
static char *sampled_block(size_t n)
{
	heapscope_set_sample_period(1);
	free(malloc(opaque(256u << 20)));
	for (int i = 0; i < 100; i++) {
		char *p = malloc(opaque(n));
		if (hs_is_sampled(p))
			return p;
		free(p);
	}
	_exit(9);
}

static void case_sampled_double(char *addr)
{
	char *p = sampled_block(100);
	publish(addr, p);
	free(p);
	free(p);
	heapscope_set_sample_period(0);
}

static void case_sampled_interior(char *addr)
{
	char *p = sampled_block(20000);
	publish(addr, p + 4096);
	free(p + 4096);
	p[19999] = 1; /* still ours */
	free(p);
	heapscope_set_sample_period(0);
}

static void case_sampled_double_realloc(char *addr)
{
	char *p = sampled_block(5000);
	free(p);
	/* a stale pointer given to free again, after the page may have
	 * been reused by another sampled block */
	char *q = malloc(opaque(5000));
	memset(q, 1, 5000);
	char *bad = q != p ? p : p + 16; /* + 16: interior of the new owner */
	publish(addr, bad);
	free(bad);
	if (q[4999] != 1)
		_exit(10);
	free(q);
	heapscope_set_sample_period(0);
}

#define CASE(fn)                                                              \
	static void test_##fn(void **state)                                   \
	{                                                                     \
		(void)state;                                                  \
		memset(shared, 0, 64);                                        \
		expect_one_report(fn, #fn);                                   \
	}
CASE(case_static)
CASE(case_mmap)
CASE(case_large_interior)
CASE(case_realloc_interior)
CASE(case_realloc_foreign)
CASE(case_sampled_double)
CASE(case_sampled_interior)
CASE(case_sampled_double_realloc)

int main(void)
{
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_case_static),
		cmocka_unit_test(test_case_mmap),
		cmocka_unit_test(test_case_large_interior),
		cmocka_unit_test(test_case_realloc_interior),
		cmocka_unit_test(test_case_realloc_foreign),
		cmocka_unit_test(test_case_sampled_double),
		cmocka_unit_test(test_case_sampled_interior),
		cmocka_unit_test(test_case_sampled_double_realloc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
