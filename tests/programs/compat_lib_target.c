// SPDX-License-Identifier: MIT
/*
 * compat_lib_target.c - run with libheapscope.so preloaded: waits (up to
 * 60 s) until both heapscope:sample_alloc and otel_memory:alloc are armed
 * (the library's own semaphores, read through dlsym), then allocates
 * 256 MiB in blocks of 1..128 KiB from compat_lib_hold, frees every third
 * block, prints "ready PID" and sleeps until killed.  Two collectors, one
 * on each provider, must then agree (tests/test_compat.sh).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N_BLOCKS 4096

static void *blocks[N_BLOCKS];

__attribute__((noinline)) void compat_lib_hold(void)
{
	for (int i = 0; i < N_BLOCKS; i++) {
		size_t size = 1024 + (size_t)(i * 7919 % 128) * 1024;

		blocks[i] = malloc(size);
		if (!blocks[i])
			abort();
		memset(blocks[i], i & 0xff, size);
	}
	for (int i = 0; i < N_BLOCKS; i += 3) {
		free(blocks[i]);
		blocks[i] = NULL;
	}
}

/* The library's semaphore (not an extern reference: that would get a
 * copy relocation the kernel never updates). */
static volatile unsigned short *semaphore(const char *name)
{
	return (volatile unsigned short *)dlsym(RTLD_DEFAULT, name);
}

int main(void)
{
	volatile unsigned short *own =
		semaphore("heapscope_sample_alloc_semaphore");
	volatile unsigned short *otel = semaphore("otel_memory_alloc_semaphore");
	struct timespec ts = {0, 10 * 1000 * 1000};

	if (!own || !otel) {
		fprintf(stderr, "compat_lib_target: libheapscope not loaded\n");
		return 2;
	}
	for (int i = 0; i < 6000 && !(*own && *otel); i++)
		nanosleep(&ts, NULL);
	ts.tv_nsec = 200 * 1000 * 1000;
	nanosleep(&ts, NULL);
	compat_lib_hold();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
