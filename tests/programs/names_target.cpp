// SPDX-License-Identifier: MIT
/*
 * names_target.cpp - the demangling test's target (issue 17, item 1): a
 * member function in a namespace, app::Table::insert(unsigned long), keeps
 * 32 MiB live in 64 KiB blocks, so its mangled symbol
 * _ZN3app5Table6insertEm is on every sampled stack.  Built -O2 -g.
 * The inline-frame tests (dwarf.cmake) need more: insert allocates through
 * app::detail::new_row(unsigned long), always_inline, so the malloc call
 * is an inlined call inside insert; and a static function, keep_log(),
 * keeps 8 MiB more.  The lines marked HS_LINE:<name> are the ones the
 * tests expect pprof to name (found in this file by grep, not counted).
 * Protocol: allocates, touches every byte, prints "ready <pid>" on stdout,
 * then sleeps until killed.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace app
{
namespace detail
{
/* An allocation helper that is never a function of its own. */
__attribute__((always_inline)) inline void *new_row(unsigned long size)
{
	void *p = std::malloc(size); /* HS_LINE:new_row_malloc */

	if (!p)
		std::abort();
	return p;
}
} // namespace detail

class Table {
    public:
	__attribute__((noinline)) void insert(unsigned long n);

    private:
	void *rows_[512];
};

void Table::insert(unsigned long n)
{
	for (unsigned long i = 0; i < n && i < 512; i++) {
		rows_[i] = detail::new_row(64 * 1024); /* HS_LINE:insert_call */
		std::memset(rows_[i], (int)i, 64 * 1024);
	}
	asm volatile("" ::: "memory"); /* not a tail call */
}
} // namespace app

static app::Table table;
static void *log_blocks[128];

/* A static function (a local symbol: .symtab only, not .dynsym). */
static __attribute__((noinline)) void keep_log(void)
{
	for (int i = 0; i < 128; i++) {
		log_blocks[i] = std::malloc(64 * 1024); /* HS_LINE:keep_log */
		if (!log_blocks[i])
			std::abort();
		std::memset(log_blocks[i], i, 64 * 1024);
	}
	asm volatile("" ::: "memory");
}

int main()
{
	table.insert(512); /* HS_LINE:main_insert */
	keep_log();
	std::printf("ready %d\n", (int)getpid());
	std::fflush(stdout);
	for (;;)
		pause();
}
