/* SPDX-License-Identifier: MIT */
/*
 * tests/test_stress.c - threads and processes under the allocator
 * (issue 7 item 3), linked with libheapscope.so.  One scenario per run:
 *
 *   test_stress fork N        fork N times while 2 threads allocate;
 *                             every child allocates and exits 0
 *   test_stress threads N     N short-lived threads (8 at a time), each
 *                             allocating and freeing blocks of other
 *                             threads; peak RSS must stay < 256 MiB
 *   test_stress prodcons N    4 producers, 4 consumers, N blocks handed
 *                             over through a queue and freed there
 *   test_stress dlopen N LIB  dlopen/dlclose LIB N times while 2 threads
 *                             allocate
 *
 * Prints what it measured; exits non-zero on the first failure.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(c)                                                              \
	do {                                                                  \
		if (!(c)) {                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n",          \
				__FILE__, __LINE__, #c);                      \
			exit(1);                                              \
		}                                                             \
	} while (0)

static volatile int stop;

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static size_t rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long v = 0, r = 0;
	CHECK(f && fscanf(f, "%lu %lu", &v, &r) == 2);
	fclose(f);
	return r * (size_t)sysconf(_SC_PAGESIZE) / 1024;
}

/* background allocator: random sizes, a window of live blocks */
static void *churn(void *arg)
{
	uint64_t s = (uintptr_t)arg + 1;
	void *live[64] = {0};
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned i = (unsigned)rnd(&s) % 64;
		free(live[i]);
		size_t n = rnd(&s) % 100 < 98 ? rnd(&s) % 2048 : rnd(&s) % 500000;
		live[i] = malloc(n + 1);
		CHECK(live[i]);
		memset(live[i], (int)i, n + 1 < 64 ? n + 1 : 64);
	}
	for (int i = 0; i < 64; i++)
		free(live[i]);
	return NULL;
}

static void start_churn(pthread_t *t, int n)
{
	stop = 0;
	for (int i = 0; i < n; i++)
		CHECK(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)i) == 0);
}

static void stop_churn(pthread_t *t, int n)
{
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

static int do_fork(long n)
{
	pthread_t t[2];
	start_churn(t, 2);
	for (long k = 0; k < n; k++) {
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			uint64_t s = (uint64_t)k;
			for (int i = 0; i < 2000; i++) {
				size_t sz = rnd(&s) % (i % 100 ? 4000 : 300000);
				char *p = malloc(sz + 1);
				if (!p)
					_exit(2);
				p[sz] = 1;
				free(p);
			}
			/* a thread in the child too: the caches work */
			pthread_t c;
			if (pthread_create(&c, NULL, churn, NULL) != 0)
				_exit(3);
			usleep(1000);
			stop = 1;
			pthread_join(c, NULL);
			_exit(0);
		}
		int st;
		CHECK(waitpid(pid, &st, 0) == pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "child %ld: status %#x\n", k, st);
			exit(1);
		}
	}
	stop_churn(t, 2);
	printf("fork: %ld children, all exited 0\n", n);
	return 0;
}

/* blocks left behind by finished threads, freed by later ones */
static void *handoff[256];
static pthread_mutex_t handoff_lock = PTHREAD_MUTEX_INITIALIZER;

static void *short_thread(void *arg)
{
	uint64_t s = (uintptr_t)arg * 7919 + 1;
	void *mine[32];
	for (int i = 0; i < 32; i++) {
		size_t n = rnd(&s) % 3000 + 1;
		mine[i] = malloc(n);
		CHECK(mine[i]);
		memset(mine[i], 1, n);
	}
	/* leave a few behind; free others' */
	pthread_mutex_lock(&handoff_lock);
	for (int i = 0; i < 4; i++) {
		unsigned k = (unsigned)rnd(&s) % 256;
		free(handoff[k]);
		handoff[k] = mine[i];
		mine[i] = NULL;
	}
	pthread_mutex_unlock(&handoff_lock);
	for (int i = 0; i < 32; i++)
		free(mine[i]);
	return NULL;
}

static int do_threads(long n)
{
	size_t peak = 0, start = rss_kib();
	for (long k = 0; k < n; k += 8) {
		pthread_t t[8];
		for (int i = 0; i < 8; i++)
			CHECK(pthread_create(&t[i], NULL, short_thread,
					     (void *)(uintptr_t)(k + i)) == 0);
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
		if (k % 1024 == 0) {
			size_t r = rss_kib();
			peak = r > peak ? r : peak;
		}
	}
	for (int i = 0; i < 256; i++)
		free(handoff[i]);
	size_t end = rss_kib();
	printf("threads: %ld short-lived threads, rss start %zu KiB, peak "
	       "%zu KiB, end %zu KiB\n",
	       n, start, peak, end);
	CHECK(peak < 256 * 1024 && end < 256 * 1024);
	return 0;
}

#define QCAP 4096
static void *queue[QCAP];
static unsigned qhead, qtail;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static long to_produce, consumed;

static void *producer(void *arg)
{
	uint64_t s = (uintptr_t)arg + 99;
	for (;;) {
		long left = __atomic_sub_fetch(&to_produce, 1, __ATOMIC_RELAXED);
		if (left < 0)
			return NULL;
		size_t n = rnd(&s) % 100 < 95 ? rnd(&s) % 1024 + 16
					      : rnd(&s) % 200000 + 16;
		size_t *p = malloc(n);
		CHECK(p);
		p[0] = n;
		((char *)p)[n - 1] = (char)n;
		pthread_mutex_lock(&qlock);
		while (qtail - qhead == QCAP)
			pthread_cond_wait(&qcond, &qlock);
		queue[qtail++ % QCAP] = p;
		pthread_cond_broadcast(&qcond);
		pthread_mutex_unlock(&qlock);
	}
}

static void *consumer(void *arg)
{
	long total = (long)(intptr_t)arg;
	for (;;) {
		pthread_mutex_lock(&qlock);
		while (qtail == qhead && consumed < total)
			pthread_cond_wait(&qcond, &qlock);
		if (consumed >= total) {
			pthread_mutex_unlock(&qlock);
			return NULL;
		}
		size_t *p = queue[qhead++ % QCAP];
		consumed++;
		pthread_cond_broadcast(&qcond);
		pthread_mutex_unlock(&qlock);
		size_t n = p[0];
		CHECK(malloc_usable_size(p) >= n);
		CHECK(((char *)p)[n - 1] == (char)n);
		free(p);
	}
}

static int do_prodcons(long n)
{
	pthread_t p[4], c[4];
	to_produce = n;
	size_t start = rss_kib();
	for (int i = 0; i < 4; i++) {
		CHECK(pthread_create(&p[i], NULL, producer, (void *)(uintptr_t)i) == 0);
		CHECK(pthread_create(&c[i], NULL, consumer, (void *)(intptr_t)n) == 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(p[i], NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(c[i], NULL);
	CHECK(consumed == n);
	size_t end = rss_kib();
	printf("prodcons: %ld blocks freed by another thread, rss %zu -> %zu "
	       "KiB\n",
	       n, start, end);
	CHECK(end < start + 256 * 1024);
	return 0;
}

static int do_dlopen(long n, const char *lib)
{
	pthread_t t[2];
	start_churn(t, 2);
	for (long k = 0; k < n; k++) {
		void *h = dlopen(lib, RTLD_NOW | (k % 2 ? RTLD_GLOBAL : RTLD_LOCAL));
		if (!h) {
			fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
			exit(1);
		}
		CHECK(dlsym(h, "mmap") || dlsym(h, "cos") || 1);
		CHECK(dlclose(h) == 0);
	}
	stop_churn(t, 2);
	printf("dlopen: %ld dlopen/dlclose of %s while allocating\n", n, lib);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s fork|threads|prodcons|dlopen N [LIB]\n",
			argv[0]);
		return 2;
	}
	long n = atol(argv[2]);
	if (!strcmp(argv[1], "fork"))
		return do_fork(n);
	if (!strcmp(argv[1], "threads"))
		return do_threads(n);
	if (!strcmp(argv[1], "prodcons"))
		return do_prodcons(n);
	if (!strcmp(argv[1], "dlopen") && argc > 3)
		return do_dlopen(n, argv[3]);
	return 2;
}
