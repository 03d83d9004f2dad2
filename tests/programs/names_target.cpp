// SPDX-License-Identifier: MIT
/*
 * names_target.cpp - the demangling test's target (issue 17, item 1): a
 * member function in a namespace, app::Table::insert(unsigned long), keeps
 * 32 MiB live in 64 KiB blocks, so its mangled symbol
 * _ZN3app5Table6insertEm is on every sampled stack.  Built -O2 -g.
 * Protocol: allocates, touches every byte, prints "ready <pid>" on stdout,
 * then sleeps until killed.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace app
{
class Table {
    public:
	__attribute__((noinline)) void insert(unsigned long n);

    private:
	void *rows_[512];
};

void Table::insert(unsigned long n)
{
	for (unsigned long i = 0; i < n && i < 512; i++) {
		rows_[i] = std::malloc(64 * 1024);
		if (!rows_[i])
			std::abort();
		std::memset(rows_[i], (int)i, 64 * 1024);
	}
	asm volatile("" ::: "memory"); /* not a tail call */
}
} // namespace app

static app::Table table;

int main()
{
	table.insert(512);
	std::printf("ready %d\n", (int)getpid());
	std::fflush(stdout);
	for (;;)
		pause();
}
