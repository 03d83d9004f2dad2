// SPDX-License-Identifier: MIT
/*
 * exit_on_term.c - a preloadable shim for tests: SIGTERM makes the
 * process exit(0), so destructors run (HEAPSCOPE_PROFILE_AT_EXIT writes
 * its profile) in a target that otherwise sleeps until killed
 * (names_target).  exit() from a handler is safe here only because the
 * targets wait in pause(), with no lock held.
 */
#include <signal.h>
#include <stdlib.h>

static void on_term(int sig)
{
	(void)sig;
	exit(0);
}

__attribute__((constructor)) static void install(void)
{
	signal(SIGTERM, on_term);
}
