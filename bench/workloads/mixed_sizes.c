// SPDX-License-Identifier: MIT
/*
 * mixed_sizes: mixed sizes up to 1 MiB with random lifetimes, the kind of
 * alloc-test, mstress and rptest. Sizes: 80% 8..1024 bytes, 17% 1..64 KiB,
 * 3% 64 KiB..1 MiB. Each thread keeps 2000 live objects replaced at random
 * (geometric lifetimes) and allocates one short-lived object per step. Each
 * object's first bytes and one byte per 4 KiB page are written, as a program
 * would, so page faults on fresh memory count.
 */
#include "common.h"

#define SLOTS 2000
#define STEPS 600000ULL

static size_t pick_size(uint64_t *s)
{
	uint64_t r = rng_next(s), u = r % 1000;

	r >>= 10;
	if (u < 800)
		return 8 + r % 1017;
	if (u < 970)
		return 1024 + r % (63 * 1024);
	return 65536 + r % (960 * 1024 + 1);
}

static void touch(char *p, size_t n)
{
	memset(p, 0x5a, n < 64 ? n : 64);
	for (size_t off = 4096; off < n; off += 4096)
		p[off] = 1;
}

static void *work(void *arg)
{
	struct bench_worker *w = arg;
	uint64_t s = rng_seed(w->id), sum = 0;
	void **slot = calloc(SLOTS, sizeof(*slot));

	for (uint64_t i = 0; i < w->steps; i++) {
		size_t k = rng_next(&s) % SLOTS, n = pick_size(&s);
		char *t;

		free(slot[k]);
		slot[k] = malloc(n);
		touch(slot[k], n);
		n = pick_size(&s);
		t = malloc(n);
		touch(t, n);
		sum += t[0];
		free(t);
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
