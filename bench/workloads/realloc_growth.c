// SPDX-License-Identifier: MIT
/*
 * realloc_growth: realloc-heavy growth. Each thread keeps 64 growing buffers
 * and grows a random one per step: 3 in 4 are strings appended to 1..64
 * bytes at a time up to 4..64 KiB, 1 in 4 are vectors grown by 1.5x up to
 * 64 KiB..8 MiB. A buffer that reaches its cap is freed and restarted. The
 * appended bytes are written. Interleaving the buffers makes in-place growth
 * depend on the allocator, not on luck.
 */
#include "common.h"

#define BUFS 64
#define STEPS 3000000ULL

struct buf {
	char *p;
	size_t len, cap_limit;
	int vector;
};

static void restart(struct buf *b, uint64_t *s)
{
	uint64_t r = rng_next(s);

	free(b->p);
	b->vector = (r & 3) == 0;
	b->len = 16;
	b->cap_limit = b->vector ? (64u << 10) << ((r >> 8) % 8) :
				   (4u << 10) << ((r >> 8) % 5);
	b->p = malloc(b->len);
	memset(b->p, 0, b->len);
}

static void *work(void *arg)
{
	struct bench_worker *w = arg;
	uint64_t s = rng_seed(w->id), sum = 0;
	struct buf *b = calloc(BUFS, sizeof(*b));

	for (int i = 0; i < BUFS; i++)
		restart(&b[i], &s);
	for (uint64_t i = 0; i < w->steps; i++) {
		uint64_t r = rng_next(&s);
		struct buf *x = &b[r % BUFS];
		size_t n = x->vector ? x->len + x->len / 2 : x->len + 1 + (r >> 32) % 64;

		if (n > x->cap_limit) {
			sum += (unsigned char)x->p[x->len - 1];
			restart(x, &s);
			continue;
		}
		x->p = realloc(x->p, n);
		memset(x->p + x->len, (int)i, n - x->len);
		x->len = n;
	}
	for (int i = 0; i < BUFS; i++)
		free(b[i].p);
	free(b);
	bench_sink += sum;
	return NULL;
}

int main(int argc, char **argv)
{
	return bench_main_steps(argc, argv, work, STEPS);
}
