// SPDX-License-Identifier: MIT
/*
 * man/libheapscope_env.c - prints the help text of the library, its
 * HEAPSCOPE_* environment options from allocator/base/option_list.h (the list
 * the allocator's options table is built from), in the layout that
 * man/help2roff.awk turns into libheapscope(7).  A build-time tool, not
 * installed.  HS_INSTALLED_LIB (the installed SONAME link) and HS_DOCDIR
 * are defined by cmake/man.cmake.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/option_list.h"

/* 134217728 -> "134217728 (128M)": the K/M/G form the options accept. */
static void print_default(int64_t v)
{
	static const char units[] = "GMK";
	int shift = 30;

	printf("%" PRId64, v);
	for (int i = 0; i < 3; i++, shift -= 10) {
		int64_t unit = (int64_t)1 << shift;

		if (v >= unit && v % unit == 0) {
			printf(" (%" PRId64 "%c)", v / unit, units[i]);
			return;
		}
	}
}

int main(void)
{
	printf("Usage: LD_PRELOAD=%s PROGRAM [ARGUMENT]...\n"
	       "       cc PROGRAM.c $(pkg-config --cflags --libs heapscope)\n"
	       "\n",
	       HS_INSTALLED_LIB);
	puts("libheapscope is a complete malloc (TCMalloc-style size classes,\n"
	     "spans, a pagemap, a page heap and thread caches) that samples\n"
	     "about one allocation per 2 MiB allocated, with unbiased weights,\n"
	     "keeps the live samples with their call stacks in a registry that\n"
	     "a collector can read from outside, and fires USDT probes at each\n"
	     "sampled allocation and free.  Preload it into a program, or link\n"
	     "it (shared, or static: libheapscope.a), and profile the program\n"
	     "with heapscope record or the heapscope daemon, or in process\n"
	     "through the API in <heapscope/heapscope.h>.\n"
	     "\n"
	     "The options below are read from the environment when the library\n"
	     "starts.  Integer values take an optional sign and a K, M or G\n"
	     "suffix (powers of 1024); a bad value is reported once on standard\n"
	     "error and the default kept.\n"
	     "\n"
	     "Environment:");
#define SECURE_NOTE                                                            \
	"  Ignored in secure-execution mode (setuid, setgid, file capabilities)."
#define X(id, dflt, secure, arg, doc)                                                \
	printf("  HEAPSCOPE_" #id "=" arg "  " doc "  Default: ");             \
	print_default(dflt);                                                   \
	printf(".%s\n", secure ? "" : SECURE_NOTE);
	HS_INT_OPTIONS(X)
#undef X
#define X(id, secure, arg, doc)                                                  \
	printf("  HEAPSCOPE_" #id "=" arg "  " doc "  Unset by default.%s\n",   \
	       secure ? "" : SECURE_NOTE);
	HS_STR_OPTIONS(X)
#undef X
	printf("\n"
	       "Files:\n"
	       "  %s  the library (SONAME link)\n"
	       "\n"
	       "Notes:\n"
	       "Turn sampling off in a running process: heapscope rate -p PID 0.\n"
	       "Preloading it into every process of a host, what to check\n"
	       "first and how to roll back: %s/deploy.md.\n",
	       HS_INSTALLED_LIB, HS_DOCDIR);
	return 0;
}
