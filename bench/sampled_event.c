// SPDX-License-Identifier: MIT
/*
 * bench/sampled_event.c - CPU cost of one sampled event (malloc + free with
 * its stack captured), at a chosen stack depth.
 *
 *   sampled_event DEPTH N [SIZE [WAIT_MS]]
 *
 * recurses DEPTH non-inlined, non-tail frames deep, then does N
 * malloc(SIZE)/free pairs.  The captured stack is DEPTH + 5 frames (loop,
 * DEPTH recursion frames, main, __libc_start_call_main,
 * __libc_start_main, _start).  Build it like Debian builds its binaries,
 * without frame pointers, and run it under the allocator with every
 * allocation sampled; use CPU time (the reference machine is shared):
 *
 *   cc -O2 -fomit-frame-pointer -fno-builtin-malloc -fno-builtin-free \
 *      bench/sampled_event.c -o /tmp/sampled_event
 *   HEAPSCOPE_SAMPLE_RATE=1 LD_PRELOAD=build/allocator/libheapscope.so \
 *      perf stat -e task-clock /tmp/sampled_event 25 200000
 *
 * (task-clock at SAMPLE_RATE=1 minus at SAMPLE_RATE=0) / N = the cost of
 * one sampled malloc+free pair.  WAIT_MS: sleep that long first, so a
 * `heapscope daemon` already running attaches before the loop; then the
 * difference includes the probes, the BPF programs and the ring buffer
 * (the daemon's /processes lists the pid once attached).
 */
#include <time.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;
static volatile unsigned long calls;

static __attribute__((noinline)) void loop(long n, size_t size)
{
	for (long i = 0; i < n; i++) {
		void *p = malloc(size);

		sink = p;
		free(p);
	}
	calls++; /* not a tail position: the frame stays */
}

static __attribute__((noinline)) void recurse(int depth, long n, size_t size)
{
	if (depth <= 1)
		loop(n, size);
	else
		recurse(depth - 1, n, size);
	calls++; /* keeps the call from being a tail call */
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 4;
	long n = argc > 2 ? atol(argv[2]) : 100000;
	size_t size = argc > 3 ? (size_t)atol(argv[3]) : 64;
	long wait_ms = argc > 4 ? atol(argv[4]) : 0;

	if (depth < 1 || n < 0 || wait_ms < 0) {
		fprintf(stderr, "usage: sampled_event DEPTH N [SIZE [WAIT_MS]]\n");
		return 2;
	}
	if (wait_ms) {
		struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
	}
	recurse(depth, n, size);
	return calls == 0;
}
