/* SPDX-License-Identifier: MIT */
/*
 * tests/test_glibc_contracts.c - the rows of issue 7 item 1 that
 * test_api_contracts.c does not already cover, one cmocka test per row,
 * through the real libheapscope.so (linked, so it interposes libc's
 * malloc).  Run twice by ctest: HEAPSCOPE_SAMPLE_RATE=0 (never sample)
 * and =1 (every allocation sampled, so every row is also checked on the
 * sampled path).
 */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

/* the tests look at a block after a realloc that must fail */
#pragma GCC diagnostic ignored "-Wuse-after-free"

/* keep the compiler from folding malloc/free pairs or constant sizes */
static void *volatile sink;
static size_t opaque(size_t n)
{
	volatile size_t v = n;
	return v;
}

static bool sampling_every(void)
{
	const char *r = getenv("HEAPSCOPE_SAMPLE_RATE");
	return r && strcmp(r, "1") == 0;
}

/* resident and virtual size in bytes, from /proc/self/statm */
static void mem_now(size_t *rss, size_t *vsz)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long v = 0, r = 0;
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu %lu", &v, &r), 2);
	fclose(f);
	*rss = r * (size_t)sysconf(_SC_PAGESIZE);
	*vsz = v * (size_t)sysconf(_SC_PAGESIZE);
}

static void check_block(void *p, size_t n, size_t align)
{
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % align, 0);
	assert_true(malloc_usable_size(p) >= n);
}

/* row: every result aligned to at least 16, whatever entry point */
static void test_align16_everywhere(void **state)
{
	(void)state;
	for (size_t n = 0; n < (3u << 20); n = n < 64 ? n + 1 : n * 3 / 2) {
		void *p = malloc(opaque(n));
		check_block(p, n, 16);
		void *c = calloc(1, opaque(n));
		check_block(c, n, 16);
		void *r = realloc(NULL, opaque(n));
		check_block(r, n, 16);
		r = realloc(r, opaque(n + 1));
		check_block(r, n + 1, 16);
		void *a = reallocarray(NULL, opaque(n | 1), 1);
		check_block(a, n | 1, 16);
		void *m = memalign(opaque(1), opaque(n)); /* tiny alignment */
		check_block(m, n, 16);
		free(p), free(c), free(r), free(a), free(m);
	}
}

/* row: malloc(0), calloc(0, n), calloc(n, 0), realloc(NULL, 0) return
 * unique non-NULL pointers that free() accepts */
static void test_zero_sizes_unique(void **state)
{
	(void)state;
	enum { N = 64 };
	void *ps[4 * N];
	for (int i = 0; i < N; i++) {
		ps[4 * i + 0] = malloc(opaque(0));
		ps[4 * i + 1] = calloc(opaque(0), 10);
		ps[4 * i + 2] = calloc(10, opaque(0));
		ps[4 * i + 3] = realloc(NULL, opaque(0));
	}
	for (int i = 0; i < 4 * N; i++) {
		assert_non_null(ps[i]);
		assert_int_equal((uintptr_t)ps[i] % 16, 0);
		for (int j = 0; j < i; j++)
			assert_ptr_not_equal(ps[i], ps[j]);
	}
	for (int i = 0; i < 4 * N; i++)
		free(ps[i]);
}

/* row: realloc(p, 0) frees p and returns NULL (glibc 2.36 behaviour;
 * C23 makes it undefined) - freed, so a loop does not leak */
static void test_realloc_zero_frees(void **state)
{
	(void)state;
	size_t rss0, vsz0, rss1, vsz1;
	for (int i = 0; i < 2000; i++) /* warm up the caches */
		assert_null(realloc(malloc(opaque(100000)), opaque(0)));
	mem_now(&rss0, &vsz0);
	for (int i = 0; i < 20000; i++) {
		void *p = malloc(opaque(i % 2 ? 100000 : 100));
		assert_non_null(p);
		memset(p, 1, 100);
		errno = 0;
		assert_null(realloc(p, opaque(0)));
	}
	mem_now(&rss1, &vsz1);
	/* 20000 leaked blocks would be >= 1 GB */
	assert_true(rss1 < rss0 + (64u << 20));
}

/* row: calloc and reallocarray overflow -> NULL, ENOMEM, old untouched */
static void test_overflow_enomem_old_untouched(void **state)
{
	(void)state;
	static const size_t bad[][2] = {
		{SIZE_MAX, 2},
		{SIZE_MAX / 2 + 1, 2},
		{(size_t)1 << 32, (size_t)1 << 32},
		{3, SIZE_MAX / 3 + 1},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(calloc(opaque(bad[i][0]), opaque(bad[i][1])));
		assert_int_equal(errno, ENOMEM);
		unsigned char *p = malloc(opaque(333));
		assert_non_null(p);
		memset(p, 0xa7, 333);
		errno = 0;
		assert_null(reallocarray(p, opaque(bad[i][0]),
					 opaque(bad[i][1])));
		assert_int_equal(errno, ENOMEM);
		for (int k = 0; k < 333; k++)
			assert_int_equal(p[k], 0xa7);
		assert_true(malloc_usable_size(p) >= 333);
		p = reallocarray(p, 2, opaque(400)); /* still a live block */
		assert_non_null(p);
		for (int k = 0; k < 333; k++)
			assert_int_equal(p[k], 0xa7);
		free(p);
	}
}

/* row: malloc(SIZE_MAX) and realloc(p, huge) -> NULL, ENOMEM, p valid */
static void test_huge_enomem_p_valid(void **state)
{
	(void)state;
	static const size_t huge[] = {
		SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 8192, SIZE_MAX / 2 + 1,
		(size_t)1 << 62, (size_t)1 << 48, /* more than the VA space */
	};
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		errno = 0;
		assert_null(malloc(opaque(huge[i])));
		assert_int_equal(errno, ENOMEM);
		for (size_t n = 10; n <= (1u << 20); n *= 32) {
			unsigned char *p = malloc(opaque(n));
			assert_non_null(p);
			memset(p, 0x3c, n);
			errno = 0;
			assert_null(realloc(p, opaque(huge[i])));
			assert_int_equal(errno, ENOMEM);
			for (size_t k = 0; k < n; k += 97)
				assert_int_equal(p[k], 0x3c);
			p = realloc(p, opaque(n * 2));
			assert_non_null(p);
			assert_int_equal(p[n - 1], 0x3c);
			free(p);
		}
	}
}

/* row: posix_memalign alignment 0, 4, 24 (and other non powers of two
 * or < sizeof(void *)) -> EINVAL, *out untouched; impossible -> ENOMEM */
static void test_posix_memalign_errors(void **state)
{
	(void)state;
	static const size_t bad_al[] = {0, 1, 2, 4, 12, 24, 48, 100, 4097,
					SIZE_MAX, ((size_t)1 << 63) + 8};
	for (size_t i = 0; i < sizeof(bad_al) / sizeof(bad_al[0]); i++) {
		void *out = (void *)0xdeadbeef;
		int saved = errno = 1234;
		assert_int_equal(posix_memalign(&out, opaque(bad_al[i]), 64),
				 EINVAL);
		assert_ptr_equal(out, (void *)0xdeadbeef);
		assert_int_equal(errno, saved); /* returns, does not set */
	}
	static const size_t bad_size[] = {SIZE_MAX, SIZE_MAX - 4095,
					  (size_t)1 << 62};
	for (size_t i = 0; i < sizeof(bad_size) / sizeof(bad_size[0]); i++) {
		for (size_t al = 8; al <= (1u << 21); al <<= 3) {
			void *out = (void *)0xdeadbeef;
			assert_int_equal(
				posix_memalign(&out, al, opaque(bad_size[i])),
				ENOMEM);
			assert_ptr_equal(out, (void *)0xdeadbeef);
		}
	}
	/* alignment so large that no block can satisfy it */
	void *out = (void *)0xdeadbeef;
	assert_int_equal(posix_memalign(&out, opaque((size_t)1 << 62), 8),
			 ENOMEM);
	assert_ptr_equal(out, (void *)0xdeadbeef);
}

/* row: 8 B .. 1 GiB through posix_memalign, memalign, aligned_alloc:
 * aligned, usable >= request, and repeated alloc/free does not creep */
static void test_alignments_no_creep(void **state)
{
	(void)state;
	size_t rss0 = 0, vsz0 = 0, rss1, vsz1;
	static const size_t sizes[] = {1, 100, 5000, 300000};
	for (int round = 0; round < 12; round++) {
		for (size_t al = 8; al <= ((size_t)1 << 30); al <<= 1) {
			for (size_t s = 0; s < 4; s++) {
				size_t n = sizes[s] + round;
				void *q = NULL;
				assert_int_equal(posix_memalign(&q, al, n), 0);
				check_block(q, n, al);
				memset(q, 1, n);
				free(q);
				q = memalign(opaque(al), opaque(n));
				check_block(q, n, al);
				((char *)q)[n - 1] = 1;
				free(q);
				q = aligned_alloc(opaque(al), opaque(n));
				check_block(q, n, al);
				((char *)q)[0] = 1;
				free(q);
				if (al >= ((size_t)1 << 22))
					break; /* big alignments: one size */
			}
		}
		if (round == 1)
			mem_now(&rss0, &vsz0); /* after warm-up */
	}
	mem_now(&rss1, &vsz1);
	print_message("aligned: rss %zu -> %zu KiB, vsz %zu -> %zu MiB\n",
		      rss0 >> 10, rss1 >> 10, vsz0 >> 20, vsz1 >> 20);
	assert_true(rss1 < rss0 + (32u << 20));
	/* each 1 GiB-aligned block may reserve up to 2 GiB of address
	 * space; ten rounds of leaks would show as tens of GiB */
	assert_true(vsz1 < vsz0 + ((size_t)4 << 30));
}

/* row: aligned_alloc with a non-power-of-two alignment -> NULL, EINVAL
 * (C17 DR 460; glibc 2.36 is laxer, the issue asks for C17) */
static void test_aligned_alloc_c17(void **state)
{
	(void)state;
	static const size_t bad_al[] = {0, 3, 6, 24, 48, 96, 4097, 3 << 20,
					SIZE_MAX};
	for (size_t i = 0; i < sizeof(bad_al) / sizeof(bad_al[0]); i++) {
		errno = 0;
		assert_null(aligned_alloc(opaque(bad_al[i]), 96));
		assert_int_equal(errno, EINVAL);
	}
	/* small powers of two are valid alignments in C17 */
	for (size_t al = 1; al <= 8; al <<= 1) {
		void *p = aligned_alloc(opaque(al), 40);
		check_block(p, 40, al);
		free(p);
	}
}

/* row: pvalloc(0) and valloc(1) are page-aligned (and usable) */
static void test_pvalloc_valloc(void **state)
{
	(void)state;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < 8; i++) {
		void *a = pvalloc(opaque(0));
		check_block(a, 0, pg);
		void *b = valloc(opaque(1));
		check_block(b, 1, pg);
		void *c = pvalloc(opaque(1));
		check_block(c, pg, pg); /* pvalloc rounds up to a page */
		void *d = valloc(opaque(pg + 1));
		check_block(d, pg + 1, pg);
		memset(c, 2, pg);
		free(a), free(b), free(c), free(d);
	}
}

/* row: malloc_usable_size(NULL) = 0 */
static void test_usable_size_null(void **state)
{
	(void)state;
	assert_int_equal(malloc_usable_size(NULL), 0);
	assert_int_equal(malloc_usable_size(sink), 0);
}

/* the size classes as the allocator reports them: each distinct usable
 * size seen while walking sizes 1.., then some page-heap sizes */
static size_t size_classes(size_t *out, size_t max)
{
	size_t k = 0;
	for (size_t n = 1; n <= (256u << 10) && k < max;) {
		void *p = malloc(opaque(n));
		assert_non_null(p);
		size_t u = malloc_usable_size(p);
		free(p);
		assert_true(u >= n);
		out[k++] = u;
		n = u + 1;
	}
	static const size_t large[] = {(256u << 10) + 1, 300000, 1u << 20,
				       (3u << 20) + 5};
	for (size_t i = 0; i < 4 && k < max; i++)
		out[k++] = large[i];
	return k;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	/* full pattern for the first 4 KiB, then every 509th byte and the
	 * last one: keeps period 1 (every block sampled) quick */
	for (size_t k = 0; k < n; k += k < 4096 ? 1 : 509)
		p[k] = (unsigned char)(k * 31 + seed);
	if (n)
		p[n - 1] = (unsigned char)((n - 1) * 31 + seed);
}

/* check the bytes fill(p, filled, seed) wrote below n */
static void verify(const unsigned char *p, size_t n, size_t filled,
		   unsigned seed)
{
	for (size_t k = 0; k < n; k += k < 4096 ? 1 : 509)
		if (p[k] != (unsigned char)(k * 31 + seed))
			fail_msg("byte %zu of %zu lost in realloc", k, n);
	if (filled && filled <= n &&
	    p[filled - 1] != (unsigned char)((filled - 1) * 31 + seed))
		fail_msg("last byte of %zu lost in realloc", filled);
}

/* row: realloc keeps the contents for every pair of size classes, both
 * at the class size and one byte below it */
static void test_realloc_every_class_pair(void **state)
{
	(void)state;
	size_t cls[160];
	size_t k = size_classes(cls, 160);
	print_message("realloc: %zu size classes, %zu pairs\n", k, k * k);
	assert_true(k >= 8);
	/* at period 1 every block is sampled and page-sized: step over
	 * the pairs so the test stays quick (still every class as source
	 * and as destination) */
	size_t step = sampling_every() ? 3 : 1;
	for (size_t i = 0; i < k; i++) {
		for (size_t j = i % step; j < k; j += step) {
			for (size_t d = 0; d < 2; d++) {
				size_t a = cls[i] - (d && cls[i] > 1);
				size_t b = cls[j] - (d && cls[j] > 1);
				unsigned seed = (unsigned)(i * 131 + j);
				unsigned char *p = malloc(opaque(a));
				assert_non_null(p);
				fill(p, a, seed);
				unsigned char *q = realloc(p, opaque(b));
				assert_non_null(q);
				assert_true(malloc_usable_size(q) >= b);
				verify(q, a < b ? a : b, a, seed);
				free(q);
			}
		}
	}
}

/* row: calloc memory reads zero even when reused (dirty blocks of every
 * class freed first, then calloc'ed in the same thread) */
static void test_calloc_zero_every_class(void **state)
{
	(void)state;
	size_t cls[160];
	size_t k = size_classes(cls, 160);
	enum { N = 8 };
	for (size_t i = 0; i < k; i++) {
		void *ps[N];
		for (int r = 0; r < N; r++) {
			ps[r] = malloc(opaque(cls[i]));
			assert_non_null(ps[r]);
			memset(ps[r], 0xee, cls[i]);
		}
		for (int r = 0; r < N; r++)
			free(ps[r]);
		for (int r = 0; r < N; r++) {
			unsigned char *c = calloc(opaque(cls[i]), 1);
			assert_non_null(c);
			size_t u = malloc_usable_size(c);
			assert_true(u >= cls[i]);
			for (size_t b = 0; b < cls[i]; b++)
				if (c[b])
					fail_msg("calloc(%zu) byte %zu = %#x",
						 cls[i], b, c[b]);
			ps[r] = c;
		}
		for (int r = 0; r < N; r++)
			free(ps[r]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_align16_everywhere),
		cmocka_unit_test(test_zero_sizes_unique),
		cmocka_unit_test(test_realloc_zero_frees),
		cmocka_unit_test(test_overflow_enomem_old_untouched),
		cmocka_unit_test(test_huge_enomem_p_valid),
		cmocka_unit_test(test_posix_memalign_errors),
		cmocka_unit_test(test_alignments_no_creep),
		cmocka_unit_test(test_aligned_alloc_c17),
		cmocka_unit_test(test_pvalloc_valloc),
		cmocka_unit_test(test_usable_size_null),
		cmocka_unit_test(test_realloc_every_class_pair),
		cmocka_unit_test(test_calloc_zero_every_class),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
