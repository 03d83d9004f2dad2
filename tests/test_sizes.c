/* SPDX-License-Identifier: MIT */
/*
 * tests/test_sizes.c - impossible sizes fail at once and commit nothing;
 * sizes the kernel would back are served (issue 14 item 2).  Linked with
 * libheapscope.so, run by tests/test_sizes.sh inside a memory cgroup
 * (256 MiB) so that a regression kills this program, not the host, under
 * vm.overcommit_memory=0 and, as root, =2.
 *
 * What the kernel would back is computed here from the kernel's own
 * rules, not from the allocator:
 *  - heuristic (0): one mapping of more than RAM + swap (sysinfo) is
 *    refused (mm/util.c __vm_enough_memory, OVERCOMMIT_GUESS);
 *  - strict (2): Committed_AS after the mapping must stay below
 *    CommitLimit (/proc/meminfo), so a request above CommitLimit is
 *    refused whatever else runs;
 *  - always (1): only what exceeds the address space is refused.
 * A size is "impossible" when the rule refuses it with a margin; a
 * "grant" size is one the rule accepts with a wide margin (8 GiB if
 * that is under half of RAM + swap; under strict at most 1/8 of what
 * CommitLimit leaves, so others on the host keep most of it).
 *
 *   test_sizes impossible   every entry point x every impossible size:
 *                           NULL and ENOMEM (posix_memalign: returns
 *                           ENOMEM, *out untouched), the old block of a
 *                           failed realloc intact; RSS grows by less
 *                           than 1 MiB over all of them; prints the
 *                           result and time of each call
 *   test_sizes grant        each entry point serves the grant size,
 *                           touched sparsely (first, last and one byte
 *                           per GiB), then frees it: RSS back
 *   test_sizes list         prints the impossible sizes (for the C++
 *                           test of operator new, sizes_new)
 *
 * At HEAPSCOPE_SAMPLE_RATE=1 every call is sampled first: a refused
 * size must show as a dropped sample (the sampled region was asked and
 * refused), a granted one as a sample taken.  Exit 0 when every check
 * passed, 1 otherwise (each failure printed).
 */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include <heapscope/heapscope.h>

#pragma GCC diagnostic ignored "-Wuse-after-free"
#pragma GCC diagnostic ignored "-Walloc-size-larger-than="

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)

/* the C++ operators, exported by libheapscope under their mangled names
 * (override.c); the nothrow_t argument is never read */
void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt);
void *_ZnamRKSt9nothrow_t(size_t n, const void *nt);
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt);

static int failures;
static void *volatile sink;
static const char nothrow_dummy; /* stands for std::nothrow */

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			failures++;                                            \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);                                   \
			printf("\n");                                          \
		}                                                              \
	} while (0)

static size_t opaque(size_t n)
{
	volatile size_t v = n;
	return v;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static size_t rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long v = 0, r = 0;
	if (!f || fscanf(f, "%lu %lu", &v, &r) != 2)
		abort();
	fclose(f);
	return r * (size_t)sysconf(_SC_PAGESIZE);
}

static uint64_t meminfo_kib(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	uint64_t v = 0;
	size_t k = strlen(key);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, k) && line[k] == ':')
			v = strtoull(line + k + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static int overcommit_mode(void)
{
	FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
	int m = -1;
	if (!f || fscanf(f, "%d", &m) != 1)
		abort();
	fclose(f);
	return m;
}

/* ---- the kernel's rule ---- */

static int mode;
static size_t ram_swap;	    /* totalram + totalswap, bytes */
static size_t commit_limit; /* CommitLimit, bytes */
static size_t commit_room;  /* CommitLimit - Committed_AS, bytes */

static void read_limits(void)
{
	struct sysinfo si;
	if (sysinfo(&si))
		abort();
	mode = overcommit_mode();
	ram_swap = ((size_t)si.totalram + si.totalswap) * si.mem_unit;
	commit_limit = meminfo_kib("CommitLimit") * KIB;
	size_t as = meminfo_kib("Committed_AS") * KIB;
	commit_room = commit_limit > as ? commit_limit - as : 0;
}

/* Does the kernel refuse one mapping of n bytes, with a margin of 1 GiB
 * for the allocator's rounding and for the rest of the host? */
static bool refused(size_t n)
{
	if (n >= ((size_t)1 << 47))
		return true; /* beyond the user address space */
	if (mode == 0)
		return n > ram_swap + GIB;
	if (mode == 2)
		return n > commit_limit + GIB;
	return false;
}

static size_t grant_size(void)
{
	size_t g = 8 * GIB;
	if (mode == 2) {
		/* what strict overcommit leaves, shared with the host */
		if (g > commit_room / 8)
			g = commit_room / 8 & ~(MIB - 1);
	} else if (g > ram_swap / 2) {
		g = ram_swap / 4 & ~(MIB - 1);
	}
	return g;
}

/* ---- entry points: each returns the block (or NULL) and the error ---- */

typedef void *(*entry_fn)(size_t n, int *err);

static void *e_malloc(size_t n, int *err)
{
	errno = 0;
	void *p = malloc(opaque(n));
	*err = errno;
	return p;
}

static void *e_calloc(size_t n, int *err)
{
	errno = 0;
	void *p = calloc(1, opaque(n));
	*err = errno;
	return p;
}

static void *e_calloc_n1(size_t n, int *err)
{
	errno = 0;
	void *p = calloc(opaque(n), 1);
	*err = errno;
	return p;
}

static void *e_realloc_null(size_t n, int *err)
{
	errno = 0;
	void *p = realloc(NULL, opaque(n));
	*err = errno;
	return p;
}

static void *e_reallocarray(size_t n, int *err)
{
	errno = 0;
	void *p = reallocarray(NULL, opaque(n), 1);
	*err = errno;
	return p;
}

static void *e_posix_memalign_64(size_t n, int *err)
{
	void *p = (void *)0x5a5a;
	int saved = errno;
	*err = posix_memalign(&p, 64, opaque(n));
	if (*err) {
		CHECK(p == (void *)0x5a5a,
		      "posix_memalign wrote *out on error");
		CHECK(errno == saved, "posix_memalign changed errno");
		return NULL;
	}
	return p;
}

static void *e_posix_memalign_1g(size_t n, int *err)
{
	void *p = (void *)0x5a5a;
	*err = posix_memalign(&p, GIB, opaque(n));
	if (*err) {
		CHECK(p == (void *)0x5a5a,
		      "posix_memalign wrote *out on error");
		return NULL;
	}
	CHECK(((uintptr_t)p & (GIB - 1)) == 0, "%p not 1 GiB aligned", p);
	return p;
}

static void *e_aligned_alloc(size_t n, int *err)
{
	errno = 0;
	void *p = aligned_alloc(4096, opaque(n));
	*err = errno;
	return p;
}

static void *e_memalign_2m(size_t n, int *err)
{
	errno = 0;
	void *p = memalign(2 * MIB, opaque(n));
	*err = errno;
	CHECK(!p || ((uintptr_t)p & (2 * MIB - 1)) == 0, "%p not aligned", p);
	return p;
}

static void *e_valloc(size_t n, int *err)
{
	errno = 0;
	void *p = valloc(opaque(n));
	*err = errno;
	return p;
}

static void *e_pvalloc(size_t n, int *err)
{
	errno = 0;
	void *p = pvalloc(opaque(n));
	*err = errno;
	return p;
}

static void *e_new_nothrow(size_t n, int *err)
{
	errno = 0;
	void *p = _ZnwmRKSt9nothrow_t(opaque(n), &nothrow_dummy);
	*err = p ? 0 : ENOMEM; /* C++ reports by NULL only */
	return p;
}

static void *e_new_array_nothrow(size_t n, int *err)
{
	void *p = _ZnamRKSt9nothrow_t(opaque(n), &nothrow_dummy);
	*err = p ? 0 : ENOMEM;
	return p;
}

static void *e_new_aligned_nothrow(size_t n, int *err)
{
	void *p = _ZnwmSt11align_val_tRKSt9nothrow_t(opaque(n), 256,
						     &nothrow_dummy);
	*err = p ? 0 : ENOMEM;
	return p;
}

static const struct entry {
	const char *name;
	entry_fn fn;
} entries[] = {
	{"malloc", e_malloc},
	{"calloc(1,n)", e_calloc},
	{"calloc(n,1)", e_calloc_n1},
	{"realloc(NULL,n)", e_realloc_null},
	{"reallocarray", e_reallocarray},
	{"posix_memalign(64)", e_posix_memalign_64},
	{"posix_memalign(1G)", e_posix_memalign_1g},
	{"aligned_alloc(4K)", e_aligned_alloc},
	{"memalign(2M)", e_memalign_2m},
	{"valloc", e_valloc},
	{"pvalloc", e_pvalloc},
	{"new(nothrow)", e_new_nothrow},
	{"new[](nothrow)", e_new_array_nothrow},
	{"new(256,nothrow)", e_new_aligned_nothrow},
};
#define NENTRIES (sizeof(entries) / sizeof(entries[0]))

/* ---- impossible sizes ---- */

static size_t sizes[16];
static size_t nsizes;

static void add_size(size_t n)
{
	if (refused(n))
		sizes[nsizes++] = n;
	else
		fprintf(stderr,
			"note: %zu bytes may be backed here (mode %d), not "
			"tested as impossible\n",
			n, mode);
}

static void impossible_sizes(void)
{
	nsizes = 0;
	/* just above what the rule allows: the smallest impossible size */
	if (mode == 0)
		add_size(ram_swap + 2 * GIB);
	else if (mode == 2)
		add_size(commit_limit + 2 * GIB);
	add_size(64 * GIB);
	add_size((size_t)1 << 40);
	add_size((size_t)1 << 46);
	add_size((size_t)1 << 47);
	add_size(SIZE_MAX / 2);
	add_size(SIZE_MAX - 4096);
	add_size(SIZE_MAX);
}

static uint64_t sampled_taken, sampled_dropped;
static bool every_sampled;

static void sampling_now(void)
{
	struct heapscope_sampling_stats st;
	if (heapscope_get_sampling_stats(&st, sizeof(st)) == 0) {
		sampled_taken = st.samples_total;
		sampled_dropped = st.dropped_total;
	}
}

/* One call expected to fail: result, errno, time, and at period 1 the
 * sample the region refused. */
static void expect_refused(const char *what, size_t n, void *p, int err,
			   double us, uint64_t dropped_before)
{
	printf("%-22s %20zu  -> %-14s %-7s %9.1f us\n", what, n,
	       p ? "NOT NULL" : "NULL", err == ENOMEM ? "ENOMEM" : "errno?",
	       us);
	CHECK(p == NULL, "%s(%zu) returned %p", what, n, p);
	CHECK(err == ENOMEM, "%s(%zu): error %d, not ENOMEM", what, n, err);
	if (p)
		free(p);
	sampling_now();
	/* sizes the region could hold were offered to it and refused */
	if (every_sampled && dropped_before != UINT64_MAX &&
	    n <= ((size_t)256 << 30))
		CHECK(sampled_dropped > dropped_before,
		      "%s(%zu): the sampled path was not tried", what, n);
}

static int run_impossible(void)
{
	impossible_sizes();
	/* one-time set-up (thread cache, sampler, registry, unwinder)
	 * happens on these, not inside the measured calls */
	for (int i = 0; i < 64; i++)
		free(sink = malloc(opaque(100 + i * 5000)));
	free(sink = malloc(opaque(300 * KIB)));
	unsigned char *small = malloc(100), *large = malloc(MIB);
	memset(small, 0x3c, 100);
	memset(large, 0xc3, MIB);

	size_t rss0 = rss_bytes();
	double worst = 0;
	for (int round = 0; round < 3; round++) {
		for (size_t s = 0; s < nsizes; s++) {
			for (size_t e = 0; e < NENTRIES; e++) {
				int err = 0;
				sampling_now();
				uint64_t d = sampled_dropped;
				double t = now_us();
				void *p = entries[e].fn(sizes[s], &err);
				t = now_us() - t;
				if (t > worst)
					worst = t;
				if (round == 0)
					expect_refused(entries[e].name,
						       sizes[s], p, err, t, d);
				else if (p || err != ENOMEM)
					expect_refused(entries[e].name,
						       sizes[s], p, err, t, d);
			}
			/* realloc of a live block: NULL, ENOMEM, intact */
			unsigned char *blocks[2] = {small, large};
			size_t lens[2] = {100, MIB};
			for (int b = 0; b < 2; b++) {
				sampling_now();
				uint64_t d = sampled_dropped;
				errno = 0;
				double t = now_us();
				void *q = realloc(blocks[b], opaque(sizes[s]));
				int err = errno;
				t = now_us() - t;
				if (round == 0 || q)
					expect_refused(b ? "realloc(1MiB,n)"
							 : "realloc(100,n)",
						       sizes[s], q, err, t, d);
				for (size_t k = 0; k < lens[b]; k += 61)
					CHECK(blocks[b][k] == (b ? 0xc3 : 0x3c),
					      "realloc changed the old block");
			}
		}
	}
	/* products that overflow size_t, and impossible alignments */
	struct {
		const char *what;
		size_t a, b;
	} const ovf[] = {
		{"calloc overflow", SIZE_MAX / 2, 3},
		{"calloc overflow", (size_t)1 << 32, (size_t)1 << 32},
		{"calloc overflow", SIZE_MAX, SIZE_MAX},
	};
	for (size_t i = 0; i < sizeof(ovf) / sizeof(ovf[0]); i++) {
		errno = 0;
		double t = now_us();
		void *p = calloc(opaque(ovf[i].a), opaque(ovf[i].b));
		int err = errno;
		t = now_us() - t;
		expect_refused(ovf[i].what, ovf[i].a, p, err, t, UINT64_MAX);
		errno = 0;
		t = now_us();
		p = reallocarray(small, opaque(ovf[i].a), opaque(ovf[i].b));
		err = errno;
		t = now_us() - t;
		expect_refused("reallocarray overflow", ovf[i].a, p, err, t,
			       UINT64_MAX);
		CHECK(small[99] == 0x3c, "reallocarray changed the block");
	}
	static const size_t aligns[][2] = {
		{(size_t)1 << 40, 4096},	    /* 1 TiB alignment */
		{(size_t)1 << 41, 1},		    /* above the largest */
		{(size_t)1 << 62, 1},		    /* absurd */
		{(size_t)1 << 63, 1},		    /* largest power of two */
		{(size_t)1 << 39, (size_t)1 << 39}, /* both huge */
		{64, SIZE_MAX - 64},
		{4096, SIZE_MAX - 4096},
	};
	for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
		size_t al = aligns[i][0], n = aligns[i][1];
		if (!refused(al) && !refused(n)) {
			printf("note: alignment %zu may be backed here\n", al);
			continue;
		}
		void *p = (void *)0x5a5a;
		double t = now_us();
		int r = posix_memalign(&p, al, opaque(n));
		t = now_us() - t;
		printf("posix_memalign(%#zx)   %20zu  -> %-14s %-7s %9.1f us\n",
		       al, n, r ? "NULL" : "NOT NULL",
		       r == ENOMEM ? "ENOMEM" : "errno?", t);
		CHECK(r == ENOMEM && p == (void *)0x5a5a,
		      "posix_memalign(%zu, %zu) = %d", al, n, r);
		if (!r)
			free(p);
		errno = 0;
		t = now_us();
		p = aligned_alloc(al, opaque(n));
		int err = errno;
		t = now_us() - t;
		expect_refused("aligned_alloc(huge al)", n, p, err, t,
			       UINT64_MAX);
		errno = 0;
		t = now_us();
		p = memalign(al, opaque(n));
		err = errno;
		t = now_us() - t;
		expect_refused("memalign(huge al)", n, p, err, t, UINT64_MAX);
	}
	size_t rss1 = rss_bytes();
	printf("RSS %zu KiB before the failed calls, %zu KiB after; slowest "
	       "call %.1f us\n",
	       rss0 / KIB, rss1 / KIB, worst);
	CHECK(rss1 < rss0 + MIB,
	      "RSS grew by %zu KiB over failed calls (metadata committed)",
	      (rss1 - rss0) / KIB);
	CHECK(heapscope_sampled_check() == 0, "sampled region invalid");
	/* the allocator still works */
	for (int i = 0; i < 1000; i++) {
		char *p = malloc(opaque((size_t)i * 37 + 1));
		CHECK(p != NULL, "malloc after the failures");
		if (p)
			p[0] = 1;
		free(p);
	}
	free(small);
	free(large);
	return failures ? 1 : 0;
}

/* ---- sizes the kernel backs ---- */

/* Touch the first and last byte and one per GiB; returns pages touched. */
static size_t touch_sparse(unsigned char *p, size_t n, bool zero)
{
	size_t k = 0;
	for (size_t off = 0; off < n; off += GIB, k++) {
		if (zero)
			CHECK(p[off] == 0, "calloc byte %zu not zero", off);
		p[off] = 0x77;
	}
	if (zero)
		CHECK(p[n - 1] == 0, "calloc last byte not zero");
	p[n - 1] = 0x77;
	return k + 1;
}

static int run_grant(void)
{
	size_t g = grant_size();
	printf("grant size %zu MiB (mode %d, RAM+swap %zu MiB, CommitLimit "
	       "%zu MiB, room %zu MiB)\n",
	       g / MIB, mode, ram_swap / MIB, commit_limit / MIB,
	       commit_room / MIB);
	if (g < 64 * MIB) {
		printf("SKIP: the kernel would back less than 64 MiB now\n");
		return 77;
	}
	for (int i = 0; i < 64; i++)
		free(sink = malloc(opaque(100 + i * 5000)));
	size_t rss0 = rss_bytes();
	/* one entry point per mapping under strict overcommit: each new
	 * mapping stays charged (the heap keeps its address space) */
	static const char *const strict_set[] = {"malloc", "calloc(1,n)",
						 "realloc(NULL,n)"};
	for (size_t e = 0; e < NENTRIES; e++) {
		bool in = mode != 2;
		for (size_t k = 0; k < 3 && !in; k++)
			in = !strcmp(entries[e].name, strict_set[k]);
		if (!in)
			continue;
		int err = 0;
		sampling_now();
		uint64_t taken = sampled_taken;
		double t = now_us();
		unsigned char *p = entries[e].fn(g, &err);
		t = now_us() - t;
		printf("%-22s %20zu  -> %-14s %9.1f us\n", entries[e].name, g,
		       p ? "granted" : "NULL", t);
		CHECK(p != NULL, "%s(%zu) refused (error %d)", entries[e].name,
		      g, err);
		if (!p)
			continue;
		sampling_now();
		if (every_sampled)
			CHECK(sampled_taken == taken + 1,
			      "%s(%zu) was not sampled", entries[e].name, g);
		size_t pages =
			touch_sparse(p, g,
				     entries[e].fn == e_calloc ||
					     entries[e].fn == e_calloc_n1);
		size_t rss = rss_bytes();
		/* each touch may fault a 2 MiB transparent huge page */
		CHECK(rss < rss0 + pages * 2 * MIB + 4 * MIB,
		      "%s: RSS %zu KiB over %zu KiB with %zu pages touched",
		      entries[e].name, rss / KIB, rss0 / KIB, pages);
		t = now_us();
		free(p);
		t = now_us() - t;
		printf("%-22s %20zu  freed in %.1f us\n", "", g, t);
	}
	/* realloc growing a small block to the grant size keeps it */
	unsigned char *p = malloc(100);
	memset(p, 0x21, 100);
	double t = now_us();
	unsigned char *q = realloc(p, opaque(g));
	t = now_us() - t;
	printf("%-22s %20zu  -> %-14s %9.1f us\n", "realloc(100,n)", g,
	       q ? "granted" : "NULL", t);
	CHECK(q != NULL, "realloc(100, %zu) refused", g);
	if (q) {
		CHECK(q[0] == 0x21 && q[99] == 0x21, "realloc lost the data");
		touch_sparse(q, g, false);
		free(q);
	} else {
		free(p);
	}
	size_t rss1 = rss_bytes();
	printf("RSS %zu KiB before, %zu KiB after the frees\n", rss0 / KIB,
	       rss1 / KIB);
	CHECK(rss1 < rss0 + 4 * MIB, "RSS not back after free: %zu KiB over",
	      (rss1 - rss0) / KIB);
	CHECK(heapscope_sampled_check() == 0, "sampled region invalid");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *r = getenv("HEAPSCOPE_SAMPLE_RATE");
	every_sampled = r && !strcmp(r, "1");
	setvbuf(stdout, NULL, _IOLBF, 0);
	read_limits();
	if (argc == 2 && !strcmp(argv[1], "list")) {
		impossible_sizes();
		for (size_t i = 0; i < nsizes; i++)
			printf("%zu\n", sizes[i]);
		return 0;
	}
	printf("overcommit_memory=%d RAM+swap %zu MiB CommitLimit %zu MiB "
	       "room %zu MiB HEAPSCOPE_SAMPLE_RATE=%s\n",
	       mode, ram_swap / MIB, commit_limit / MIB, commit_room / MIB,
	       r ? r : "(default)");
	if (argc == 2 && !strcmp(argv[1], "impossible"))
		return run_impossible();
	if (argc == 2 && !strcmp(argv[1], "grant"))
		return run_grant();
	fprintf(stderr, "usage: test_sizes impossible|grant|list\n");
	return 2;
}
