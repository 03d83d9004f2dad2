// SPDX-License-Identifier: MIT
/*
 * new_target.cpp - the mappings test's second target (issue 17, item 3):
 * its allocations go through libstdc++'s operator new and libc's strdup,
 * so the innermost frame of every sampled stack (the first location a
 * profile meets) is in a library, not in the program, which pprof must
 * still see as mapping 1.  Keeps 32 MiB live in 64 KiB blocks (half each
 * way).  Protocol: allocates, touches every byte, prints "ready <pid>" on
 * stdout, then sleeps until killed.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unistd.h>

static char *blocks[512];

int main()
{
	static char text[64 * 1024];

	std::memset(text, 'x', sizeof(text) - 1);
	for (int i = 0; i < 512; i += 2) {
		blocks[i] = new char[64 * 1024];
		std::memset(blocks[i], i, 64 * 1024);
		blocks[i + 1] = strdup(text);
		if (!blocks[i + 1])
			std::abort();
	}
	std::printf("ready %d\n", (int)getpid());
	std::fflush(stdout);
	for (;;)
		pause();
}
