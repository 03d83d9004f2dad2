// SPDX-License-Identifier: MIT
/*
 * small_churn: small-object churn in one thread, the kind of cfrac,
 * espresso and glibc-simple. Each thread keeps a working set of 4096 small
 * objects (8..256 bytes, skewed to 16..64), replaces a random one per step,
 * and every 64 steps allocates a burst of 32 same-size temporaries and frees
 * them in LIFO order. With -t N, N threads do the same work independently.
 */
#include "common.h"

#define SLOTS 4096
#define STEPS 16000000ULL

static size_t pick_size(uint64_t r)
{
	/* 3 in 4 requests are 16..64 bytes, the rest 8..256. */
	if ((r & 3) != 0)
		return 16 + (r >> 8) % 49;
	return 8 + (r >> 8) % 249;
}

static void *work(void *arg)
{
	struct bench_worker *w = arg;
	uint64_t s = rng_seed(w->id), sum = 0;
	void **slot = calloc(SLOTS, sizeof(*slot));
	void *tmp[32];

	for (uint64_t i = 0; i < w->steps; i++) {
		uint64_t r = rng_next(&s);
		size_t k = r % SLOTS, n = pick_size(r >> 16);

		free(slot[k]);
		slot[k] = malloc(n);
		*(uint64_t *)slot[k] = i;
		if ((i & 63) == 0) {
			size_t m = pick_size(r >> 24);

			for (int j = 0; j < 32; j++) {
				tmp[j] = malloc(m);
				((char *)tmp[j])[0] = (char)j;
			}
			for (int j = 31; j >= 0; j--) {
				sum += ((char *)tmp[j])[0];
				free(tmp[j]);
			}
		}
	}
	for (int k = 0; k < SLOTS; k++)
		free(slot[k]);
	free(slot);
	bench_sink += sum;
	return NULL;
}

int main(int argc, char **argv)
{
	return bench_main_steps(argc, argv, work, STEPS);
}
