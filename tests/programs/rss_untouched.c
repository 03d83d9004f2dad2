// SPDX-License-Identifier: MIT
/*
 * rss_untouched.c - a target for tests/test_rss_untouched.sh: 256 MiB in
 * large blocks of which only a known part is touched, and a small-object
 * heap, then it waits.  Blocks: 24 x 8 MiB (the sampled region's pool)
 * and one 64 MiB + 8 KiB block (over HEAPSCOPE_REGION_BLOCK_MAX: a
 * page-heap span).  In each it writes the first quarter of its 4 KiB
 * pages (and nothing else).  Then 100000 x 96-byte objects, written.
 * It measures for itself, with mincore(2), the resident bytes of its
 * large blocks (page-rounded to the blocks' 8 KiB spans) and prints
 *   ready LARGE_RESIDENT LARGE_BYTES SMALL_BYTES
 * then sleeps until stdin closes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NBIG 24
#define BIG ((size_t)8 << 20)
#define HUGE (((size_t)64 << 20) + 8192)
#define NSMALL 100000
#define SMALL 96
#define PAGE 4096

static uint64_t resident(void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(PAGE - 1);
	size_t len = ((uintptr_t)p + n - a + PAGE - 1) & ~(size_t)(PAGE - 1);
	unsigned char *v = malloc(len / PAGE);
	uint64_t r = 0;

	if (!v || mincore((void *)a, len, v)) {
		perror("mincore");
		exit(1);
	}
	for (size_t i = 0; i < len / PAGE; i++)
		r += (v[i] & 1) ? PAGE : 0;
	free(v);
	return r;
}

static void touch_quarter(char *p, size_t n)
{
	for (size_t off = 0; off < n / 4; off += PAGE)
		p[off] = 1;
}

int main(void)
{
	static char *big[NBIG + 1];
	static size_t len[NBIG + 1];
	uint64_t res = 0, bytes = 0;
	char c;

	for (int i = 0; i <= NBIG; i++) {
		len[i] = i < NBIG ? BIG : HUGE;
		big[i] = malloc(len[i]);
		if (!big[i]) {
			perror("malloc");
			return 1;
		}
		touch_quarter(big[i], len[i]);
		bytes += len[i];
	}
	for (int i = 0; i < NSMALL; i++) {
		char *p = malloc(SMALL);

		if (!p)
			return 1;
		memset(p, 0x5a, SMALL);
	}
	for (int i = 0; i <= NBIG; i++)
		res += resident(big[i], len[i]);
	printf("ready %llu %llu %llu\n", (unsigned long long)res,
	       (unsigned long long)bytes, (unsigned long long)NSMALL * SMALL);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
