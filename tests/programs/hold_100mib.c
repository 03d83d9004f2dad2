// SPDX-License-Identifier: MIT
/*
 * hold_100mib.c - the daemon tests' target: allocates 100 MiB in 64 KiB
 * blocks from one known function (hold_100mib), touches it, prints
 * "ready <pid>" and sleeps until killed.  With an argument "churn [N]" it
 * then keeps allocating and freeing N (default 4) 64 KiB blocks per
 * millisecond from churn_allocs (so an allocs window sees events).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (64 * 1024)
#define COUNT (100 * 1024 * 1024 / BLOCK)

static void *blocks[COUNT];

__attribute__((noinline)) void hold_100mib(void)
{
	for (int i = 0; i < COUNT; i++) {
		blocks[i] = malloc(BLOCK);
		if (!blocks[i])
			abort();
		memset(blocks[i], i & 0xff, BLOCK);
	}
}

__attribute__((noinline)) void churn_allocs(void)
{
	void *p = malloc(BLOCK);

	if (!p)
		abort();
	memset(p, 1, 64);
	free(p);
}

int main(int argc, char **argv)
{
	struct timespec ts = {0, 1000 * 1000};
	int churn = argc > 1 && !strcmp(argv[1], "churn");
	int per_ms = argc > 2 ? atoi(argv[2]) : 4;

	hold_100mib();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		if (churn)
			for (int i = 0; i < per_ms; i++)
				churn_allocs();
		nanosleep(&ts, NULL);
	}
	return 0;
}
