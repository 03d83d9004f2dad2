// SPDX-License-Identifier: MIT
/*
 * e2e_target.c - the end-to-end test's target program.
 *
 * Built with -O2 -fomit-frame-pointer, so its stacks can only be right if
 * the allocator's unwinder uses DWARF CFI.  Two known call sites keep known
 * amounts live:
 *   hold_small_blocks: 64 MiB in 4 KiB blocks (16384 blocks)
 *   hold_large_blocks: 16 MiB in 1 MiB blocks (16 blocks)
 * Protocol: waits (up to 20 s) until a collector has armed heapscope's
 * probes (or proceeds anyway: the collector also reads the registry),
 * allocates, touches every byte, prints "ready <pid>" on stdout, then
 * sleeps until killed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SMALL_BLOCK 4096
#define SMALL_COUNT (64 * 1024 * 1024 / SMALL_BLOCK)
#define LARGE_BLOCK (1024 * 1024)
#define LARGE_COUNT 16

static void *small_blocks[SMALL_COUNT];
static void *large_blocks[LARGE_COUNT];

__attribute__((noinline)) void hold_small_blocks(void)
{
	for (int i = 0; i < SMALL_COUNT; i++) {
		small_blocks[i] = malloc(SMALL_BLOCK);
		if (!small_blocks[i])
			abort();
		memset(small_blocks[i], i & 0xff, SMALL_BLOCK);
	}
}

__attribute__((noinline)) void hold_large_blocks(void)
{
	for (int i = 0; i < LARGE_COUNT; i++) {
		large_blocks[i] = malloc(LARGE_BLOCK);
		if (!large_blocks[i])
			abort();
		memset(large_blocks[i], i & 0xff, LARGE_BLOCK);
	}
}

static void wait_for_collector(void)
{
	int (*attached)(void) =
		(int (*)(void))dlsym(RTLD_DEFAULT, "heapscope_collector_attached");
	struct timespec ts = {0, 10 * 1000 * 1000};

	for (int i = 0; attached && i < 2000 && !attached(); i++)
		nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--no-wait") != 0)
		return 2;
	if (argc == 1)
		wait_for_collector();
	hold_small_blocks();
	hold_large_blocks();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
