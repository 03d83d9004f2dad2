// SPDX-License-Identifier: MIT
/*
 * semaphore_target.c - links libheapscope.so and prints the USDT
 * semaphores of its probes (sample_alloc, sample_free, rate_change)
 * whenever they change: "sem A F R".  It allocates meanwhile, so a
 * collector has events to read.  Runs until killed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <heapscope/heapscope.h>

/* Through dlsym on the library's own handle: an `extern` reference from
 * the executable would get a copy relocation, a copy the kernel's uprobe
 * reference counter never touches. */
static volatile unsigned short *sem(const char *name)
{
	void *h = dlopen("libheapscope.so", RTLD_NOW | RTLD_NOLOAD);
	void *p = h ? dlsym(h, name) : NULL;
	if (!p) {
		fprintf(stderr, "no %s\n", name);
		exit(2);
	}
	return p;
}

int main(void)
{
	volatile unsigned short *sa = sem("heapscope_sample_alloc_semaphore");
	volatile unsigned short *sf = sem("heapscope_sample_free_semaphore");
	volatile unsigned short *sr = sem("heapscope_rate_change_semaphore");
	int last = -1;
	void *keep[64] = {0};

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (unsigned i = 0;; i++) {
		int a = *sa, f = *sf, r = *sr;
		int now = a << 20 | f << 10 | r;
		if (now != last) {
			/* the public API agrees with the raw semaphore */
			if (heapscope_collector_attached() != (a != 0))
				printf("mismatch attached=%d a=%d\n",
				       heapscope_collector_attached(), a);
			printf("sem %d %d %d\n", a, f, r);
			fflush(stdout);
			last = now;
		}
		free(keep[i % 64]);
		keep[i % 64] = malloc(1000 + i % 5000);
		usleep(2000);
	}
}
