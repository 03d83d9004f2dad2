// SPDX-License-Identifier: MIT
/*
 * large_blocks: large blocks (1..16 MiB) allocated and freed. Each thread
 * keeps 4 live blocks and replaces a random one per step, writing one byte
 * per 4 KiB page of the new block, so the cost is the allocator's large path
 * and whether it reuses memory already faulted in or maps fresh pages.
 */
#include "common.h"

#define LIVE 4
#define STEPS 300ULL

static void *work(void *arg)
{
	struct bench_worker *w = arg;
	uint64_t s = rng_seed(w->id), sum = 0;
	char *live[LIVE] = { 0 };

	for (uint64_t i = 0; i < w->steps; i++) {
		uint64_t r = rng_next(&s);
		size_t k = r % LIVE, n = (1u << 20) + (r >> 16) % (15u << 20);

		if (live[k])
			sum += live[k][0];
		free(live[k]);
		live[k] = malloc(n);
		for (size_t off = 0; off < n; off += 4096)
			live[k][off] = (char)i;
	}
	for (int k = 0; k < LIVE; k++)
		free(live[k]);
	bench_sink += sum;
	return NULL;
}

int main(int argc, char **argv)
{
	return bench_main_steps(argc, argv, work, STEPS);
}
