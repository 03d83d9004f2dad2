// SPDX-License-Identifier: MIT
/*
 * rss_target.c - a process holding a known heap, for `heapscope rss`
 * (tests/test_rss.sh, test_daemon_rss.sh).  Starts WORKERS threads (their
 * start-up allocations happen now), prints "ready1 PID", waits for a line
 * on stdin, allocates and touches the blocks of `plan` below; then each
 * worker allocates and frees WORKER_OBJS objects of WORKER_SIZE bytes,
 * which stay in its thread cache (it lives on); prints
 * "ready2 EXPECTED IN_USE MAIN_TC" and waits until stdin closes.
 *
 * EXPECTED: the bytes the allocator must count as handed out for the
 * plan's blocks, computed here from the size-class rule
 * (allocator/core/size_class.c: 16-byte steps up to 128, then 8 classes
 * per power of two) and not from the library; the workers' objects are
 * freed, so they add nothing.  IN_USE: heapscope_get_allocator_stats'
 * in_use_bytes (every thread cache counts as used there); MAIN_TC: its
 * thread_cache_bytes (this thread's cache only).  No stdio between the
 * two prints: it would allocate its buffers.
 *
 * With the argument "corrupt" it first spoils the version of its own
 * statistics block (a field the allocator never reads), so a collector
 * must refuse the block; with "loop", before ready2, it points the
 * block's thread-cache list at a fake cache whose link points to itself
 * (no cache is created after that: the workers have theirs), so a
 * collector's walk must stop and refuse it.  The block is reached through dlsym
 * on the library's handle: a reference from the executable would get a copy
 * relocation, a copy of the block that the library never updates.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapscope/abi.h"
#include "heapscope/heapscope.h"

static const struct {
	size_t size, count;
} plan[] = {
	{100, 20000}, {200, 3000}, {1000, 8000}, {5000, 2000}, {1u << 20, 30},
};

#define WORKERS 4
#define WORKER_OBJS 40
#define WORKER_SIZE 100

/* start: the workers may allocate; done: they have; never: hold them */
static pthread_barrier_t start, done, never;

static void *worker(void *arg)
{
	void *objs[WORKER_OBJS];

	(void)arg;
	pthread_barrier_wait(&start);
	for (int i = 0; i < WORKER_OBJS; i++) {
		objs[i] = malloc(WORKER_SIZE);
		if (!objs[i])
			abort();
		memset(objs[i], 1, WORKER_SIZE);
	}
	for (int i = 0; i < WORKER_OBJS; i++)
		free(objs[i]);
	pthread_barrier_wait(&done);
	pthread_barrier_wait(&never);
	return NULL;
}

/* A fake thread cache for "loop" (8-byte aligned, inside any layout
 * the block may describe). */
static _Alignas(8) unsigned char fake_cache[65536];

/* The library's own block: dlsym on its handle, not a link to the
 * symbol (see above). */
static struct heapscope_stats_block *block(void)
{
	void *lib = dlopen("libheapscope.so.1", RTLD_NOW | RTLD_NOLOAD);

	return lib ? dlsym(lib, HEAPSCOPE_STATS_SYMBOL) : NULL;
}

/* The size the allocator reserves for a request of n bytes. */
static size_t rounded(size_t n)
{
	size_t base = 128;

	if (n <= 128)
		return (n + 15) & ~(size_t)15;
	if (n > 256 * 1024) /* large: whole 8 KiB pages */
		return (n + 8191) & ~(size_t)8191;
	while (base * 2 < n)
		base *= 2;
	return (n + base / 8 - 1) / (base / 8) * (base / 8);
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(1);
}

static void wait_line(void)
{
	char c;

	while (read(0, &c, 1) == 1 && c != '\n')
		;
}

int main(int argc, char **argv)
{
	struct heapscope_allocator_stats st;
	char line[128];
	uint64_t expected = 0;
	struct heapscope_stats_block *b;
	pthread_t tids[WORKERS];
	void **keep;
	size_t n = 0, k = 0;

	b = block();
	if (!b)
		return 1;
	if (argc > 1 && !strcmp(argv[1], "corrupt"))
		b->version = 99;
	for (size_t i = 0; i < sizeof(plan) / sizeof(plan[0]); i++)
		n += plan[i].count;
	keep = malloc(n * sizeof(*keep));
	if (!keep)
		return 1;
	pthread_barrier_init(&start, NULL, WORKERS + 1);
	pthread_barrier_init(&done, NULL, WORKERS + 1);
	pthread_barrier_init(&never, NULL, WORKERS + 2);
	for (int i = 0; i < WORKERS; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL))
			return 1;
	snprintf(line, sizeof(line), "ready1 %d\n", (int)getpid());
	say(line);
	wait_line();
	for (size_t i = 0; i < sizeof(plan) / sizeof(plan[0]); i++)
		for (size_t j = 0; j < plan[i].count; j++) {
			keep[k] = malloc(plan[i].size);
			if (!keep[k])
				return 1;
			memset(keep[k++], 0x5a, plan[i].size);
			expected += rounded(plan[i].size);
		}
	pthread_barrier_wait(&start);
	pthread_barrier_wait(&done);
	heapscope_get_allocator_stats(&st, sizeof(st));
	if (argc > 1 && !strcmp(argv[1], "loop")) {
		/* a cache-sized buffer whose next link is its own address */
		uint64_t self = (uint64_t)(uintptr_t)fake_cache;

		memcpy(fake_cache + b->tcache_next_offset, &self, sizeof(self));
		__atomic_store_n(&b->tcache_count, 2, __ATOMIC_RELAXED);
		__atomic_store_n(&b->tcache_head, self, __ATOMIC_RELEASE);
	}
	snprintf(line, sizeof(line), "ready2 %llu %llu %llu\n",
		 (unsigned long long)expected,
		 (unsigned long long)st.in_use_bytes,
		 (unsigned long long)st.thread_cache_bytes);
	say(line);
	wait_line();
	return keep[0] == NULL;
}
