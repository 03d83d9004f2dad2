// SPDX-License-Identifier: MIT
/*
 * rss_target.c - a process holding a known heap, for `heapscope rss`
 * (tests/test_rss.sh).  Prints "ready1 PID", waits for a line on stdin,
 * allocates and touches the blocks of `plan` below, prints
 * "ready2 EXPECTED API_INUSE" and waits until killed or stdin closes.
 *
 * EXPECTED: the bytes the allocator must count for those blocks,
 * computed here from the size-class rule (allocator/core/size_class.c:
 * 16-byte steps up to 128, then 8 classes per power of two) and not from
 * the library; API_INUSE: heapscope_get_allocator_stats' in_use_bytes
 * minus thread_cache_bytes (one thread: every thread cache).  No stdio
 * between the two prints: it would allocate its buffers.
 *
 * With the argument "corrupt" it first spoils the version of its own
 * statistics block (a field the allocator never reads), so a collector
 * must refuse the block.  The block is reached through dlsym on the
 * library's handle: a reference from the executable would get a copy
 * relocation, a copy of the block that the library never updates.
 */
#include <dlfcn.h>
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
	void **keep;
	size_t n = 0, k = 0;

	if (argc > 1 && !strcmp(argv[1], "corrupt")) {
		void *lib = dlopen("libheapscope.so.1", RTLD_NOW | RTLD_NOLOAD);
		struct heapscope_stats_block *b =
			lib ? dlsym(lib, HEAPSCOPE_STATS_SYMBOL) : NULL;

		if (!b)
			return 1;
		b->version = 99;
	}
	for (size_t i = 0; i < sizeof(plan) / sizeof(plan[0]); i++)
		n += plan[i].count;
	keep = malloc(n * sizeof(*keep));
	if (!keep)
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
	heapscope_get_allocator_stats(&st, sizeof(st));
	snprintf(line, sizeof(line), "ready2 %llu %llu\n",
		 (unsigned long long)expected,
		 (unsigned long long)(st.in_use_bytes - st.thread_cache_bytes));
	say(line);
	wait_line();
	return keep[0] == NULL;
}
