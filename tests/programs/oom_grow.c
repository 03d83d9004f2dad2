// SPDX-License-Identifier: MIT
/*
 * oom_grow.c - the pre-OOM test's target (tests/test_oom.sh): holds
 * 16 MiB from one function (steady_site, 64 KiB blocks), prints
 * "ready <pid>", waits for a line on stdin (the test's "go": its daemon
 * follows it by then), then allocates and touches 4 MiB every 50 ms from
 * another (grow_site) and never frees, until the OOM killer of its
 * memory cgroup kills it.  Exits 3 if malloc fails (a limit without an
 * OOM kill).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STEADY_BLOCK (64 * 1024)
#define STEADY_COUNT (16 * 1024 * 1024 / STEADY_BLOCK)
#define GROW_BLOCK (4 * 1024 * 1024)

static void *steady[STEADY_COUNT];
static void *volatile last;

__attribute__((noinline)) void steady_site(void)
{
	for (int i = 0; i < STEADY_COUNT; i++) {
		steady[i] = malloc(STEADY_BLOCK);
		if (!steady[i])
			exit(3);
		memset(steady[i], 1, STEADY_BLOCK);
	}
}

__attribute__((noinline)) void grow_site(void)
{
	char *p = malloc(GROW_BLOCK);

	if (!p)
		exit(3);
	memset(p, 2, GROW_BLOCK);
	last = p; /* kept: the heap only grows */
}

int main(void)
{
	struct timespec ts = {0, 50 * 1000 * 1000};
	char line[16];

	steady_site();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 2;
	for (;;) {
		grow_site();
		nanosleep(&ts, NULL);
	}
	return 0;
}
