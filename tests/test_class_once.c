/* SPDX-License-Identifier: MIT */
/*
 * tests/test_class_once.c - h22-rss: the size classes fitted to the
 * sizes real programs ask for (core/size_class.c), and classes over
 * 4 KiB a thread took once not kept in its cache (core/thread_cache.c,
 * ONCE_BYTES).
 *
 * - Classes: jq's 272, 392 and 776-byte blocks get 272, 400 and 800
 *   bytes (were 288, 416, 832), gawk's 4800 gets 4864 (was 5120); every
 *   size up to 512 rounds up by less than 16 bytes, up to 1 KiB and from
 *   4 to 8 KiB by at most 1/16, elsewhere above 128 by at most 1/8.  The
 *   figures are written here, not computed by size_class.c's rule.
 * - A new thread's first malloc+free of a 100000-byte block (a class
 *   over 4 KiB) leaves its list empty with a limit of 0: the block went
 *   back to the central list, and its span (one object) to the page
 *   heap, so small_span_bytes is back where it was.  The second
 *   malloc (the thread's second refill of the class) gives the list
 *   its class's limit.  A 4096-byte block is cached from the first
 *   free.
 * - The empty span a central list keeps (central_freelist.c KEEP_EMPTY):
 *   none of a class over 16 KiB.  A first malloc+free of a 20000-byte
 *   block (class 20480, a 40 KiB span) leaves small_span_bytes where it
 *   was (its span went to the page heap); one of a 12000-byte block
 *   (class 12288, a 24 KiB span) leaves it one span higher (kept).
 * Linked with libheapscope.a, sampling off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <cmocka.h>

#include "base/stats.h"
#include "core/init.h"
#include "core/size_class.h"
#include "core/thread_cache.h"

static int setup(void **state)
{
	(void)state;
	hs_init_global();
	return 0;
}

static size_t class_of(size_t n)
{
	return hs_classes[hs_size_to_class(n)].size;
}

static void test_fitted_classes(void **state)
{
	(void)state;
	assert_int_equal(class_of(272), 272);
	assert_int_equal(class_of(392), 400);
	assert_int_equal(class_of(776), 800);
	assert_int_equal(class_of(4800), 4864);
	assert_int_equal(class_of(11200), 11264); /* gawk's node pools */
	assert_int_equal(class_of(120), 128);	  /* 16-byte aligned */
	for (size_t n = 1; n <= HS_MAX_SMALL_SIZE; n++) {
		size_t w = class_of(n) - n;
		if (n <= 512)
			assert_true(w < 16);
		else if (n <= 1024 || (n > 4096 && n <= 8192))
			assert_true(w * 16 <= n);
		else
			assert_true(w * 8 <= n);
	}
}

/* volatile reads: the compiler takes malloc for a call that writes no
 * memory but the block it returns */
static hs_tcache_t *cache(void)
{
	return *(hs_tcache_t *volatile *)&hs_thread.tc;
}

static void *once_thread(void *arg)
{
	int *ok = arg;
	/* the thread's cache, activated by a class nothing here frees */
	void *keep = malloc(16);
	hs_tcache_t *tc = cache();
	unsigned big = hs_size_to_class(100000);
	unsigned page = hs_size_to_class(4096);
	*ok = 0;
	if (tc->state != HS_TC_ACTIVE || tc->lists[big].max_length != 0)
		return NULL;
	int64_t spans0 = hs_stat_get(HS_STAT_small_span_bytes);
	void *p = malloc(100000);
	if (!p || hs_stat_get(HS_STAT_small_span_bytes) <= spans0)
		return NULL;
	free(p);
	if (tc->lists[big].length != 0 || tc->lists[big].max_length != 0 ||
	    hs_stat_get(HS_STAT_small_span_bytes) != spans0)
		return NULL;
	p = malloc(100000); /* the second refill: the list has its limit */
	if (tc->lists[big].max_length != hs_classes[big].max_cached ||
	    hs_classes[big].max_cached < 1)
		return NULL;
	free(p);
	spans0 = hs_stat_get(HS_STAT_small_span_bytes);
	if (!(p = malloc(20000)))
		return NULL;
	free(p);
	if (hs_stat_get(HS_STAT_small_span_bytes) != spans0)
		return NULL;
	unsigned kept = hs_size_to_class(12000);
	if (!(p = malloc(12000)))
		return NULL;
	free(p);
	if (hs_classes[kept].size > 16384 ||
	    hs_stat_get(HS_STAT_small_span_bytes) !=
		    spans0 + (int64_t)(hs_classes[kept].pages * HS_PAGE_SIZE))
		return NULL;
	p = malloc(4096);
	free(p);
	if (tc->lists[page].length < 1)
		return NULL;
	free(keep);
	*ok = 1;
	return NULL;
}

static void test_once_not_cached(void **state)
{
	(void)state;
	pthread_t t;
	int ok = -1;
	assert_int_equal(pthread_create(&t, NULL, once_thread, &ok), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(ok, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fitted_classes),
		cmocka_unit_test(test_once_not_cached),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
