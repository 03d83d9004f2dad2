// SPDX-License-Identifier: MIT
/*
 * secure_target.c - the program of sec_setuid_preload
 * (tests/test_secure_exec.sh), installed setuid root by the test.  Not
 * linked with heapscope: the library comes from /etc/ld.so.preload.
 * Allocates and frees a fixed mix of sizes, then prints one line that
 * depends only on what the library was told and on the credentials:
 *
 *   heapscope=1 period=2097152 secure=1 uid=65534 euid=0 sum=...
 *
 * heapscope  1 when libheapscope is loaded (its API found by dlsym)
 * period     heapscope_get_sample_period(), i.e. HEAPSCOPE_SAMPLE_RATE
 *            as the library took it (-1: not loaded)
 * secure     getauxval(AT_SECURE)
 * sum        a checksum of the blocks' contents (the heap works)
 *
 * Returns from main, so the library's destructors run (that is where
 * HEAPSCOPE_PROFILE_AT_EXIT writes) and exits 0.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define NBLOCKS 2000

static void *blocks[NBLOCKS];

int main(void)
{
	int64_t (*period)(void) = (int64_t(*)(void))dlsym(
		RTLD_DEFAULT, "heapscope_get_sample_period");
	uint64_t sum = 0;

	for (int i = 0; i < NBLOCKS; i++) {
		size_t n = 1 + (size_t)(i * 7919) % 70000;

		blocks[i] = malloc(n);
		if (!blocks[i])
			return 2;
		memset(blocks[i], i & 0xff, n);
	}
	for (int i = 0; i < NBLOCKS; i += 2) {
		size_t n = 1 + (size_t)(i * 7919) % 70000;

		sum = sum * 31 + ((unsigned char *)blocks[i])[n - 1] + n;
		free(blocks[i]);
		blocks[i] = NULL;
	}
	/* the odd blocks stay live: a profile at exit has samples */
	printf("heapscope=%d period=%lld secure=%lu uid=%u euid=%u sum=%llu\n",
	       period != NULL, period ? (long long)period() : -1LL,
	       getauxval(AT_SECURE), (unsigned)getuid(), (unsigned)geteuid(),
	       (unsigned long long)sum);
	return 0;
}
