// SPDX-License-Identifier: MIT
/*
 * residency_target.c - target of the swap/residency test (test_swap.sh).
 *
 * Run preloaded with libheapscope.so at HEAPSCOPE_SAMPLE_RATE=1 (every
 * allocation sampled, weight = r + 1, so the estimate a*W/(r+1) equals the
 * allocated size a exactly).  Four call sites keep known blocks live:
 *   blocks_paged_out:  touched, then pushed to swap with MADV_PAGEOUT
 *   blocks_untouched:  never touched
 *   blocks_touched:    touched and kept
 *   blocks_half:       first half touched, second half never
 * It checks its own /proc/self/pagemap until the paged-out blocks show as
 * swapped (retrying MADV_PAGEOUT), then prints one line per site:
 *   expect SITE RESIDENT SWAPPED NOT_RESIDENT   (bytes)
 * and "ready PID", and sleeps until killed.  Exit 3: pages not swapped
 * (no swap device?).
 */
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define N_OUT 3
#define SZ_OUT (64 * 1024)
#define N_UNTOUCHED 5
#define SZ_UNTOUCHED (32 * 1024)
#define N_TOUCHED 7
#define SZ_TOUCHED (16 * 1024)
#define N_HALF 2
#define SZ_HALF (64 * 1024)

static char *out_blocks[N_OUT], *untouched[N_UNTOUCHED], *touched[N_TOUCHED],
	*half[N_HALF];

__attribute__((noinline)) void blocks_paged_out(void)
{
	for (int i = 0; i < N_OUT; i++) {
		out_blocks[i] = malloc(SZ_OUT);
		memset(out_blocks[i], 0x5a + i, SZ_OUT);
	}
}

__attribute__((noinline)) void blocks_untouched(void)
{
	for (int i = 0; i < N_UNTOUCHED; i++)
		untouched[i] = malloc(SZ_UNTOUCHED);
}

__attribute__((noinline)) void blocks_touched(void)
{
	for (int i = 0; i < N_TOUCHED; i++) {
		touched[i] = malloc(SZ_TOUCHED);
		memset(touched[i], 0x33 + i, SZ_TOUCHED);
	}
}

__attribute__((noinline)) void blocks_half(void)
{
	for (int i = 0; i < N_HALF; i++) {
		half[i] = malloc(SZ_HALF);
		memset(half[i], 0x77, SZ_HALF / 2);
	}
}

/* Pages of [p, p + len) that pagemap reports swapped. */
static size_t swapped_pages(int fd, const char *p, size_t len)
{
	uint64_t e[64];
	size_t n = len / 4096, k = 0;

	if (n > 64 ||
	    pread(fd, e, n * 8, (off_t)((uintptr_t)p / 4096) * 8) != (ssize_t)(n * 8))
		return 0;
	for (size_t i = 0; i < n; i++)
		k += (e[i] >> 62) & 1;
	return k;
}

int main(void)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	size_t a;

	blocks_paged_out();
	blocks_untouched();
	blocks_touched();
	blocks_half();
	for (int i = 0; i < N_OUT; i++) {
		int tries;

		if (((uintptr_t)out_blocks[i] & 4095) != 0)
			return 4; /* sampled blocks start on their own pages */
		for (tries = 0; tries < 50; tries++) {
			madvise(out_blocks[i], SZ_OUT, MADV_PAGEOUT);
			if (swapped_pages(fd, out_blocks[i], SZ_OUT) == SZ_OUT / 4096)
				break;
			usleep(20000);
		}
		if (tries == 50) {
			fprintf(stderr, "block %d not swapped out (%zu pages)\n",
				i, swapped_pages(fd, out_blocks[i], SZ_OUT));
			return 3;
		}
	}
	a = malloc_usable_size(out_blocks[0]);
	printf("expect blocks_paged_out 0 %zu 0\n", N_OUT * a);
	a = malloc_usable_size(untouched[0]);
	printf("expect blocks_untouched 0 0 %zu\n", N_UNTOUCHED * a);
	a = malloc_usable_size(touched[0]);
	printf("expect blocks_touched %zu 0 0\n", N_TOUCHED * a);
	a = malloc_usable_size(half[0]);
	if (a != SZ_HALF)
		return 5; /* the expectation below assumes whole pages */
	printf("expect blocks_half %zu 0 %zu\n", N_HALF * (size_t)(SZ_HALF / 2),
	       N_HALF * (a - SZ_HALF / 2));
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
