// SPDX-License-Identifier: MIT
/*
 * fastpath: a hot loop of malloc(32)/free, N iterations (argument 1,
 * default 100000000), size optional (argument 2). Prints the ns per pair.
 * Used two ways: timed (ns per pair), and under callgrind at N and 2N, where
 * the difference in instructions divided by N is the cost of one pair with
 * start-up cancelled out.
 */
#include "common.h"

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 100000000ULL;
	size_t size = argc > 2 ? strtoul(argv[2], NULL, 0) : 32;
	double t0, t1;

	/* Warm the thread cache so the loop measures the fast path. */
	free(malloc(size));
	t0 = bench_now();
	for (uint64_t i = 0; i < n; i++) {
		void *p = malloc(size);

		bench_use(p);
		free(p);
	}
	t1 = bench_now();
	printf("%.3f\n", (t1 - t0) * 1e9 / (double)n);
	return 0;
}
