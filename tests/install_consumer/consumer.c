// SPDX-License-Identifier: MIT
/*
 * consumer.c - a program built against the installed heapscope (pkg-config
 * or find_package; tests/test_install.sh): allocates N blocks and prints
 * "period P samples S" from the library's own statistics.  Run at
 * HEAPSCOPE_SAMPLE_RATE=1, S >= N only when the program's malloc is
 * heapscope's (glibc's malloc would leave the sampler untouched).
 */
#include <stdio.h>
#include <stdlib.h>

#include <heapscope/heapscope.h>

#define N 200

int main(void)
{
	struct heapscope_sampling_stats st;
	static void *p[N];

	for (int i = 0; i < N; i++)
		p[i] = malloc(64 + i);
	if (heapscope_get_sampling_stats(&st, sizeof(st)))
		return 1;
	for (int i = 0; i < N; i++)
		free(p[i]);
	printf("period %lld samples %llu\n",
	       (long long)heapscope_get_sample_period(),
	       (unsigned long long)st.samples_total);
	return 0;
}
