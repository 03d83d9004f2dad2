// SPDX-License-Identifier: MIT
/*
 * hostile_target.c - a target that lies to the collector: it links
 * libfakeheapscope.so (probes + the exported `heapscope_registry`) and
 * fills the registry with garbage chosen by argv[1]:
 *   capacity   huge capacity / high_water / live
 *   unmapped   records pointing into unmapped memory
 *   cycle      records pointing back at the header (overlap / loop)
 *   depth      valid header, records with absurd depth, zero weight,
 *              duplicate and future sequence numbers
 *   writer     generation stuck odd (a writer that never finishes),
 *              records changing under the reader
 *   random     every header byte random, re-randomized constantly
 * Prints "ready PID" and keeps the lie up until killed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heapscope/abi.h"

extern struct heapscope_registry heapscope_registry;

static struct heapscope_record recs[512];

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "random";
	struct heapscope_registry *h = &heapscope_registry;
	uint64_t x = 88172645463325252ull;
	int churn = 0;

	if (!strcmp(mode, "capacity")) {
		h->capacity = UINT64_MAX / 2;
		h->high_water = UINT64_MAX / 2;
		h->live = UINT64_MAX / 2;
		h->records = (uintptr_t)recs;
	} else if (!strcmp(mode, "unmapped")) {
		void *m = mmap(NULL, 1 << 20, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(m, 1 << 20);
		h->records = (uintptr_t)m;
		h->capacity = h->high_water = h->live = 1000;
	} else if (!strcmp(mode, "cycle")) {
		h->records = (uintptr_t)h - 64;
		h->capacity = h->high_water = h->live = 4;
	} else if (!strcmp(mode, "depth")) {
		for (int i = 0; i < 512; i++) {
			recs[i].seq = (uint64_t)(i % 7) + 1; /* duplicates */
			recs[i].depth = i % 3 ? 0xffffffffu : 64;
			recs[i].weight = i % 5 ? UINT64_MAX : 0;
			recs[i].requested = UINT64_MAX - (uint64_t)i;
			recs[i].allocated = (uint64_t)i;
			recs[i].ptr = UINT64_MAX - 4095;
			for (int k = 0; k < 64; k++)
				recs[i].stack[k] = UINT64_MAX - (uint64_t)k;
		}
		h->records = (uintptr_t)recs;
		h->capacity = h->high_water = 512;
		h->live = 512;
		h->next_seq = 3;
	} else if (!strcmp(mode, "writer")) {
		h->records = (uintptr_t)recs;
		h->capacity = h->high_water = h->live = 512;
		h->generation = 1;
		churn = 1;
	} else {
		churn = 2;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		if (churn == 1) {
			for (int i = 0; i < 512; i++) {
				recs[i].seq = x;
				recs[i].depth = (uint32_t)x;
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			}
			h->generation += 2; /* stays odd */
		} else if (churn == 2) {
			uint64_t *w = (uint64_t *)h;
			for (size_t i = 0; i < sizeof(*h) / 8; i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				w[i] = x;
			}
		} else {
			usleep(10000);
		}
	}
}
