// SPDX-License-Identifier: MIT
/*
 * memory_return: how much memory an allocator gives back. Builds a 1 GiB
 * heap of small objects (16..256 bytes), frees it all, idles 5 s, then calls
 * malloc_trim(0) (looked up with dlsym, so it exists for every allocator;
 * the library that provides it is printed: libc's is a no-op for other
 * allocators) and idles 1 s more. RSS from /proc/self/statm is sampled every
 * 100 ms by a second thread, which allocates nothing (no stdio).
 *
 * Output (stdout), one line per sample: "<seconds> <rss KiB> <phase>", then
 * "# event <name> <seconds>" lines and "# trim <library>".
 * Argument 1: heap size in MiB (default 1024).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "common.h"

static atomic_int phase; /* 0 start, 1 build, 2 freed, 3 trimmed, 4 done */
static double t_start;
static const char *phase_name[] = { "start", "build", "freed", "trimmed", "done" };

/* open/read, not stdio: sampling must not allocate. */
static long rss_kib(void)
{
	char buf[128];
	long size = 0, res = 0;
	ssize_t got;
	int fd = open("/proc/self/statm", O_RDONLY);

	if (fd < 0)
		return -1;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = 0;
	sscanf(buf, "%ld %ld", &size, &res);
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(1, buf, n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1) < 0)
		_exit(1);
}

static void *sampler(void *arg)
{
	(void)arg;
	while (atomic_load(&phase) != 4) {
		int ph = atomic_load(&phase);

		say("%.3f %ld %s\n", bench_now() - t_start, rss_kib(), phase_name[ph]);
		usleep(100000);
	}
	return NULL;
}

static void event(const char *name)
{
	say("# event %s %.3f %ld\n", name, bench_now() - t_start, rss_kib());
}

int main(int argc, char **argv)
{
	size_t target = (argc > 1 ? strtoull(argv[1], NULL, 0) : 1024) << 20;
	size_t cap = target / 64, n = 0, bytes = 0;
	uint64_t s = rng_seed(0);
	void **objs;
	pthread_t t;
	int (*trim)(size_t);
	Dl_info info;

	/* The pointer array is mapped here, not malloc'd, and unmapped before
	 * the idle phase, so what stays resident after the free is the heap. */
	objs = mmap(NULL, cap * sizeof(*objs), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (objs == MAP_FAILED)
		return 1;
	t_start = bench_now();
	pthread_create(&t, NULL, sampler, NULL);
	usleep(300000);
	event("start");
	atomic_store(&phase, 1);
	while (bytes < target && n < cap) {
		size_t sz = 16 + rng_next(&s) % 241;

		objs[n] = malloc(sz);
		memset(objs[n], 1, sz);
		bytes += sz;
		n++;
	}
	event("peak");
	for (size_t i = 0; i < n; i++)
		free(objs[i]);
	munmap(objs, cap * sizeof(*objs));
	event("freed");
	atomic_store(&phase, 2);
	sleep(5);
	event("idle5");
	trim = (int (*)(size_t))dlsym(RTLD_DEFAULT, "malloc_trim");
	if (trim && dladdr((void *)trim, &info) && info.dli_fname)
		say("# trim %s\n", info.dli_fname);
	else
		say("# trim none\n");
	if (trim)
		trim(0);
	event("trimmed");
	atomic_store(&phase, 3);
	sleep(1);
	event("end");
	atomic_store(&phase, 4);
	pthread_join(t, NULL);
	return 0;
}
