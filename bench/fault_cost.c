// SPDX-License-Identifier: MIT
/*
 * bench/fault_cost.c - what a page fault costs on this machine: the price
 * the allocator's release policies weigh RSS against (core/page_release.c,
 * region/pages_cache.c, sampling/unwind_tables.c).
 *
 *   bench/build/fault_cost [FILE] [ROUNDS]
 *
 * Prints, in microseconds per fault (median of ROUNDS, default 50):
 *   file   a read of a private mapping of FILE (default /usr/lib/x86_64-
 *          linux-gnu/libc.so.6, in the page cache), one touch per 64 KiB
 *          after MADV_DONTNEED: each maps the 16 pages around it
 *          (fault-around), as a lookup in unwind tables does;
 *   anon   a write to each 4 KiB page of 64 MiB of fresh anonymous memory,
 *          then again after MADV_DONTNEED (zeroed pages, as a page heap
 *          span released and reused);
 *   populate  the same 64 MiB faulted in by MADV_POPULATE_WRITE calls of
 *          1, 4, 8, 16 and 64 pages, per page (what carving a fresh span
 *          does: core/central_freelist.c populate_carve).
 * Time, not counts: run it on a quiet machine.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define MAX_ROUNDS 1000

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	const char *path =
		argc > 1 ? argv[1] : "/usr/lib/x86_64-linux-gnu/libc.so.6";
	int rounds = argc > 2 ? atoi(argv[2]) : 50;
	static double file_us[MAX_ROUNDS], fresh_us[MAX_ROUNDS],
		again_us[MAX_ROUNDS], pop_us[5][MAX_ROUNDS];
	static const size_t batch[5] = {1, 4, 8, 16, 64};
	const size_t anon_len = (size_t)64 << 20;
	volatile unsigned long sink = 0;

	if (rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "fault_cost: ROUNDS must be 1..%d\n",
			MAX_ROUNDS);
		return 2;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	off_t end = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
	if (fd < 0 || end < 65536) {
		perror(path);
		return 2;
	}
	size_t len = (size_t)end & ~(size_t)65535;
	volatile const char *f =
		mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (size_t i = 0; i < len; i += 4096) /* into the page cache */
		sink += (unsigned char)f[i];
	for (int r = 0; r < rounds; r++) {
		madvise((void *)f, len, MADV_DONTNEED);
		double t = now_us();
		for (size_t i = 0; i < len; i += 65536)
			sink += (unsigned char)f[i];
		file_us[r] = (now_us() - t) / (double)(len / 65536);
	}
	for (int r = 0; r < rounds; r++) {
		char *a = mmap(NULL, anon_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		madvise(a, anon_len, MADV_NOHUGEPAGE);
		double t = now_us();
		for (size_t i = 0; i < anon_len; i += 4096)
			a[i] = 1;
		fresh_us[r] = (now_us() - t) / (double)(anon_len / 4096);
		madvise(a, anon_len, MADV_DONTNEED);
		t = now_us();
		for (size_t i = 0; i < anon_len; i += 4096)
			a[i] = 1;
		again_us[r] = (now_us() - t) / (double)(anon_len / 4096);
		for (int b = 0; b < 5; b++) {
			size_t step = batch[b] * 4096;
			madvise(a, anon_len, MADV_DONTNEED);
			t = now_us();
			for (size_t i = 0; i < anon_len; i += step)
				if (madvise(a + i, step, MADV_POPULATE_WRITE)) {
					perror("madvise(MADV_POPULATE_WRITE)");
					return 1;
				}
			pop_us[b][r] =
				(now_us() - t) / (double)(anon_len / 4096);
		}
		munmap(a, anon_len);
	}
	printf("file (fault-around, %s): %.2f us per fault\n", path,
	       median(file_us, rounds));
	printf("anon, fresh: %.2f us per fault\n", median(fresh_us, rounds));
	printf("anon, after MADV_DONTNEED: %.2f us per fault\n",
	       median(again_us, rounds));
	for (int b = 0; b < 5; b++)
		printf("anon, MADV_POPULATE_WRITE of %zu pages a call: %.2f us "
		       "per page\n",
		       batch[b], median(pop_us[b], rounds));
	return sink == 42;
}
