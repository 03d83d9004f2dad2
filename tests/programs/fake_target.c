// SPDX-License-Identifier: MIT
/*
 * fake_target.c - a process with known heapscope samples for the collector's
 * end-to-end test.  Three samples are in the registry before any collector
 * attaches; once the probes are armed (the USDT semaphores are non-zero)
 * it frees one of them and fires more allocs and frees, prints "done",
 * lingers for LINGER_MS and exits.  Expected heap profile (inuse bytes):
 *   main;site_c 8192
 *   main;mid;site_a 4480
 *   main;site_b;[unknown] 1600
 *   main;fake_lib_frame 2048
 *   main;zlibVersion 112      (libz.so.1 is dlopen'ed after the attach)
 * Frame addresses are function entry + 1, so (return address - 1) lies at
 * the function's first byte.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake_heapscope.h"

__attribute__((noinline)) void site_a(void)
{
	__asm__ volatile("");
}
__attribute__((noinline)) void site_b(void)
{
	__asm__ volatile("");
}
__attribute__((noinline)) void site_c(void)
{
	__asm__ volatile("");
}
__attribute__((noinline)) void mid(void)
{
	__asm__ volatile("");
}

#define RA(f) ((uint64_t)(uintptr_t)(f) + 1)

int main(int argc, char **argv)
{
	uint64_t st_a[] = {RA(site_a), RA(mid), RA(main)};
	uint64_t st_b[] = {RA(fake_lib_frame), RA(main)};
	uint64_t st_c[] = {RA(site_c), RA(main)};
	uint64_t st_d[] = {0x10, RA(site_b), RA(main)};
	uint64_t st_free[] = {RA(site_b), RA(main)};
	int linger_ms = argc > 1 ? atoi(argv[1]) : 1000;
	uint64_t s3, s7;

	/* Before the attach: only the registry knows these. */
	fake_hs_alloc(0x1000, 99, 112, 1000, st_a, 3);	  /* 1120 */
	fake_hs_alloc(0x2000, 1023, 1024, 2048, st_b, 2); /* 2048 */
	s3 = fake_hs_alloc(0x3000, 9, 16, 50, st_c, 2);	  /* freed below */
	printf("ready %d\n", (int)getpid());
	fflush(stdout);

	for (int i = 0; !fake_hs_armed(); i++) {
		if (i > 30000) {
			fprintf(stderr, "fake_target: probes never armed\n");
			return 1;
		}
		usleep(1000);
	}
	fake_hs_free(s3, st_free, 2);
	fake_hs_alloc(0x4000, 99, 112, 3000, st_a, 3);	  /* +3360 */
	fake_hs_alloc(0x5000, 4095, 4096, 8192, st_c, 2); /* 8192 */
	fake_hs_alloc(0x6000, 0, 16, 100, st_d, 3);	  /* 1600 */
	fake_hs_lose_event(); /* the collector must report 1 sequence gap */
	s7 = fake_hs_alloc(0x7000, 100, 112, 5000, st_b, 2); /* transient */
	/* A library mapped after the collector's maps snapshot. */
	void *z = dlopen("libz.so.1", RTLD_NOW);
	void *zv = z ? dlsym(z, "zlibVersion") : NULL;
	uint64_t st_z[] = {zv ? RA(zv) : 0x20, RA(main)};
	fake_hs_alloc(0x8000, 0, 16, 7, st_z, 2); /* 112 */
	fake_hs_rate_change(1048576);
	fake_hs_free(s7, st_free, 2);
	printf("done\n");
	fflush(stdout);
	usleep(linger_ms * 1000);
	return 0;
}
