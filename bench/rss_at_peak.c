// SPDX-License-Identifier: MIT
/*
 * bench/rss_at_peak.c - where a process's resident memory is at its peak
 * (bench/rss_at_peak.sh preloads it after the allocator under test).
 *
 * A thread of its own reads /proc/self/statm every 500 us; at each new
 * peak (by more than 64 KiB) it reads /proc/self/smaps and keeps, per
 * mapping, its Rss, and, when heapscope is the allocator, its statistics
 * at that moment (heapscope_get_allocator_stats, found with dlsym).  At
 * exit it writes to $RSS_AT_PEAK_OUT.<pid>:
 *
 *   peak KIB
 *   anon KIB             private anonymous mappings ([heap] included)
 *   file PATH KIB        file-backed, per file, summed over its mappings
 *   other NAME KIB       [stack], [vdso], ...
 *   heapscope FIELD KIB  the allocator's statistics at the peak
 *
 * The peak is the highest RSS the thread saw, which may miss a peak
 * shorter than 500 us (ru_maxrss does not); the thread itself and this
 * object add the same few pages under every allocator.  Every exec'd
 * process reports for itself; a fork child that does not exec has no
 * watching thread and writes nothing.  Not for production: a
 * measurement aid.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXMAP 4096
#define NSTAT 14

struct map {
	char name[160]; /* path, [name] or "" for anonymous */
	long rss;	/* KiB */
};

static struct map snap[MAXMAP], cur[MAXMAP];
static int nsnap, ncur;
static long peak_kib;
static uint64_t stats[NSTAT];
static int have_stats;
static int (*get_stats)(void *, size_t);
static volatile int stop;
static pthread_t th;
static const char *out;
static pid_t owner; /* the process whose thread watches; a fork child
		     * (which has no such thread) writes nothing */

static const char *stat_names[NSTAT] = {
	"in_use",	    "thread_cache_self", "central_free",
	"pageheap_free",    "pageheap_released", "released_total",
	"system",	    "metadata",		 "large",
	"sampled_pages",    "sampled_proxy",	 "sampled_record",
	"sampled_inuse_estimate", "sampled_fragmentation_estimate",
};

static long rss_now(void)
{
	char b[128];
	long size, res;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	b[n] = 0;
	if (sscanf(b, "%ld %ld", &size, &res) != 2)
		return 0;
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* /proc/self/smaps into cur[]: one entry per mapping with Rss > 0. */
static void read_smaps(void)
{
	static char buf[1 << 16];
	char line[512], name[160] = "";
	size_t have = 0, off = 0;
	int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);

	ncur = 0;
	if (fd < 0)
		return;
	for (;;) {
		char *nl;
		if (off == have || !(nl = memchr(buf + off, '\n', have - off))) {
			memmove(buf, buf + off, have - off);
			have -= off;
			off = 0;
			ssize_t n = read(fd, buf + have, sizeof(buf) - have);
			if (n <= 0)
				break;
			have += (size_t)n;
			continue;
		}
		size_t len = (size_t)(nl - (buf + off));
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, buf + off, len);
		line[len] = 0;
		off = (size_t)(nl - buf) + 1;
		unsigned long lo, hi;
		char *sp = strchr(line, ' '), *dash = strchr(line, '-');
		if (dash && sp && dash < sp &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			/* "lo-hi perms offset dev inode   path" */
			char *p = line;
			for (int field = 0; field < 5 && p; field++) {
				p = strchr(p, ' ');
				while (p && *p == ' ')
					p++;
			}
			snprintf(name, sizeof(name), "%s", p ? p : "");
		} else if (strncmp(line, "Rss:", 4) == 0) {
			long r = atol(line + 4);
			if (r > 0 && ncur < MAXMAP) {
				snprintf(cur[ncur].name, sizeof(cur[ncur].name),
					 "%s", name);
				cur[ncur++].rss = r;
			}
		}
	}
	close(fd);
}

static void *watch(void *arg)
{
	(void)arg;
	while (!stop) {
		long r = rss_now();
		if (r > peak_kib + 64) {
			uint64_t st[NSTAT];
			int ok = get_stats && get_stats(st, sizeof(st)) == 0;
			read_smaps();
			peak_kib = r;
			memcpy(snap, cur, sizeof(cur[0]) * (size_t)ncur);
			nsnap = ncur;
			if (ok)
				memcpy(stats, st, sizeof(st));
			have_stats = ok;
		}
		usleep(500);
	}
	return NULL;
}

__attribute__((constructor)) static void start(void)
{
	out = getenv("RSS_AT_PEAK_OUT");
	if (!out)
		return;
	owner = getpid();
	get_stats = (int (*)(void *, size_t))dlsym(
		RTLD_DEFAULT, "heapscope_get_allocator_stats");
	if (pthread_create(&th, NULL, watch, NULL) != 0)
		out = NULL;
}

__attribute__((destructor)) static void finish(void)
{
	char path[4096];
	FILE *f;
	long anon = 0;

	if (!out || getpid() != owner)
		return;
	stop = 1;
	pthread_join(th, NULL);
	snprintf(path, sizeof(path), "%s.%d", out, (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "peak %ld\n", peak_kib);
	for (int i = 0; i < nsnap; i++)
		if (snap[i].name[0] == 0 || strcmp(snap[i].name, "[heap]") == 0)
			anon += snap[i].rss;
	fprintf(f, "anon %ld\n", anon);
	/* file-backed and named mappings, summed per name */
	for (int i = 0; i < nsnap; i++) {
		long sum = 0;
		int seen = 0;
		if (snap[i].name[0] == 0 || strcmp(snap[i].name, "[heap]") == 0)
			continue;
		for (int j = 0; j < i && !seen; j++)
			seen = strcmp(snap[j].name, snap[i].name) == 0;
		if (seen)
			continue;
		for (int j = i; j < nsnap; j++)
			if (strcmp(snap[j].name, snap[i].name) == 0)
				sum += snap[j].rss;
		fprintf(f, "%s %s %ld\n", snap[i].name[0] == '[' ? "other" : "file",
			snap[i].name, sum);
	}
	if (have_stats)
		for (int i = 0; i < NSTAT; i++)
			fprintf(f, "heapscope %s %llu\n", stat_names[i],
				(unsigned long long)(stats[i] / 1024));
	fclose(f);
}
