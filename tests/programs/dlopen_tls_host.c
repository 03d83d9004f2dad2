/* SPDX-License-Identifier: MIT */
/*
 * tests/programs/dlopen_tls_host.c - a host that holds static TLS, then
 * dlopen's libheapscope.so, as a Python extension or a plugin linking the
 * library does (issue 14 item 3).
 *
 *   dlopen_tls_host PLUGIN LIB
 *
 * The executable has 1600 bytes of initial-exec TLS; PLUGIN (256 bytes of
 * initial-exec TLS, tls_plugin.c) is dlopen'ed first, then LIB with
 * RTLD_NOW.  glibc fails the second dlopen with "cannot allocate memory in
 * static TLS block" when LIB's initial-exec TLS does not fit in what is
 * left.  Then LIB's allocator is used through dlsym: blocks of several
 * sizes from the main thread, from a thread started before the dlopens,
 * and from threads that exit (their caches
 * must go back: LIB's in-use bytes after a malloc_trim return to what
 * they were), and in a child after fork.  Exits 0 when all
 * holds, 1 with a one-line reason otherwise.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heapscope/heapscope.h"

#define EXE_TLS_BYTES 1600
#define THREADS 4
#define ROUNDS 3
#define BLOCKS 2000

static __thread __attribute__((
	tls_model("initial-exec"))) unsigned char exe_block[EXE_TLS_BYTES];

static void *(*hs_malloc)(size_t);
static void (*hs_free)(void *);
static size_t (*hs_usable)(void *);
static int (*hs_stats)(struct heapscope_allocator_stats *, size_t);
static int (*hs_trim)(size_t);
static size_t (*plugin_fill)(unsigned char);

#define FAIL(...)                                                              \
	do {                                                                   \
		fprintf(stderr, "dlopen_tls_host: " __VA_ARGS__);              \
		fputc('\n', stderr);                                           \
		exit(1);                                                       \
	} while (0)

static void *must_sym(void *h, const char *name)
{
	void *f = dlsym(h, name);
	if (!f)
		FAIL("dlsym %s: %s", name, dlerror());
	return f;
}

/* The thread's TLS blocks of the executable and the plugin hold what it
 * writes.  0 or -1. */
static int check_tls(unsigned char v)
{
	memset(exe_block, v, sizeof(exe_block));
	for (size_t i = 0; i < sizeof(exe_block); i++)
		if (((volatile unsigned char *)exe_block)[i] != v)
			return -1;
	return plugin_fill(v) == (size_t)256 * v ? 0 : -1;
}

/* Allocates BLOCKS blocks of sizes 1 .. ~64 KiB through LIB, writes each
 * whole, checks it and its usable size, frees them.  0 or -1. */
static int churn(unsigned seed)
{
	void *live[BLOCKS];
	uint64_t s = seed * 2654435761u + 1;
	for (int i = 0; i < BLOCKS; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		size_t n = (size_t)(s >> 33) % (i % 50 ? 2048 : 65536) + 1;
		unsigned char *p = hs_malloc(n);
		if (!p || hs_usable(p) < n)
			return -1;
		memset(p, (int)(i & 0xff), n);
		live[i] = p;
		p[0] = (unsigned char)n;
		p[n - 1] = (unsigned char)i;
	}
	for (int i = 0; i < BLOCKS; i++)
		hs_free(live[i]);
	return 0;
}

static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	if (check_tls((unsigned char)(id + 1)) || churn(id))
		return (void *)1;
	return NULL;
}

/* A thread that exists before the dlopens (glibc sets up the new static
 * TLS in every running thread): waits for a byte on the pipe, then works
 * like the others. */
static int go[2];

static void *early_worker(void *arg)
{
	char c;
	if (read(go[0], &c, 1) != 1)
		return (void *)1;
	return worker(arg);
}

static void join_ok(pthread_t t, const char *what)
{
	void *ret;
	if (pthread_join(t, &ret) || ret)
		FAIL("%s failed", what);
}

/* LIB's in-use bytes after its malloc_trim, which empties the calling
 * thread's cache and the central transfer caches: with no block live,
 * what other threads' caches hold (plus LIB's own, fixed, blocks): a
 * span whose objects are all back has gone to the page heap. */
static uint64_t in_use_after_trim(void)
{
	struct heapscope_allocator_stats st;
	hs_trim(0);
	if (hs_stats(&st, sizeof(st)) != 0)
		FAIL("heapscope_get_allocator_stats failed");
	return st.in_use_bytes;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		FAIL("usage: dlopen_tls_host PLUGIN LIB");
	memset(exe_block, 1, sizeof(exe_block)); /* the block is in use */
	pthread_t early;
	if (pipe(go) || pthread_create(&early, NULL, early_worker, (void *)99))
		FAIL("pipe or pthread_create failed");
	void *plugin = dlopen(argv[1], RTLD_NOW);
	if (!plugin)
		FAIL("dlopen %s: %s", argv[1], dlerror());
	plugin_fill = must_sym(plugin, "tls_plugin_fill");
	void *lib = dlopen(argv[2], RTLD_NOW);
	if (!lib)
		FAIL("dlopen %s: %s", argv[2], dlerror());
	hs_malloc = must_sym(lib, "malloc");
	hs_free = must_sym(lib, "free");
	hs_usable = must_sym(lib, "malloc_usable_size");
	hs_stats = must_sym(lib, "heapscope_get_allocator_stats");
	hs_trim = must_sym(lib, "malloc_trim");
	if (hs_malloc == (void *(*)(size_t))malloc)
		FAIL("dlsym(malloc) found libc's, not %s's", argv[2]);
	if (check_tls(9) || churn(100))
		FAIL("main thread: allocation through %s failed", argv[2]);
	if (write(go[1], "g", 1) != 1)
		FAIL("write to the pipe failed");
	join_ok(early, "the thread started before the dlopens");

	uint64_t before = in_use_after_trim();
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t t[THREADS];
		for (int i = 0; i < THREADS; i++)
			if (pthread_create(
				    &t[i], NULL, worker,
				    (void *)(uintptr_t)(r * THREADS + i)))
				FAIL("pthread_create failed");
		for (int i = 0; i < THREADS; i++)
			join_ok(t[i], "a thread");
		uint64_t after = in_use_after_trim();
		if (after != before)
			FAIL("round %d: %llu bytes in use after its threads "
			     "exited and a trim, %llu before (caches not "
			     "returned)",
			     r, (unsigned long long)after,
			     (unsigned long long)before);
	}

	pid_t pid = fork();
	if (pid < 0)
		FAIL("fork failed");
	if (pid == 0) {
		pthread_t t;
		void *ret = (void *)1;
		if (churn(200) ||
		    pthread_create(&t, NULL, worker, (void *)50) ||
		    pthread_join(t, &ret) || ret)
			_exit(1);
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("child after fork failed (status %#x)", st);
	printf("dlopen_tls_host: %s loaded after %d + %d bytes of static TLS; "
	       "%d threads x %d rounds and a forked child allocated through "
	       "it\n",
	       argv[2], EXE_TLS_BYTES, 256, THREADS, ROUNDS);
	return 0;
}
