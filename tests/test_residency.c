// SPDX-License-Identifier: MIT
/*
 * test_residency.c - hs_residency__scan against the truth, read page by
 * page from /proc/self/pagemap and /proc/kpageflags by this test (root;
 * exit 0 = pass, 1 = fail, 77 = skip without /proc/kpageflags).
 *
 * Memory of several shapes, scanned as "samples" with odd start / end
 * pages: small anonymous pages (mapped in order or not), PMD-mapped THP
 * (MADV_HUGEPAGE), a PTE-mapped THP (one page mprotect'ed: the PMD is
 * split, the folio stays large), pages shared with a forked child (not
 * exclusively mapped), a PTE-mapped THP with holes.  For every sample, in both HS_KPF_SHAPE (the
 * default) and HS_KPF_ALL: pages, present, swapped, zero, huge, compound
 * head / tail equal the truth; SHAPE leaves dirty / referenced / active /
 * KSM at 0; flags_known is the mode.  When THP is available, the THP
 * samples must be huge in the truth too (else that part is reported as
 * not exercised).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profiles.h"

#define PG 4096ul
#define HPAGE (2ul << 20)
#define KPF_ZERO_PAGE 24
#define KPF_THP 22
#define KPF_HUGE 17
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16

static int pm_fd, kpf_fd, fails;

struct truth {
	uint32_t pages, present, swapped, zero, huge, head, tail;
};

static struct truth truth_of(uintptr_t p, size_t len)
{
	struct truth t = {0};

	for (uintptr_t a = p & ~(PG - 1); a < p + len; a += PG) {
		uint64_t e = 0, f = 0, pfn;

		t.pages++;
		if (pread(pm_fd, &e, 8, (off_t)(a / PG) * 8) != 8)
			exit(1);
		if (e >> 62 & 1)
			t.swapped++;
		if (!(e >> 63))
			continue;
		t.present++;
		pfn = e & ((1ull << 55) - 1);
		if (pread(kpf_fd, &f, 8, (off_t)pfn * 8) != 8)
			exit(1);
		t.zero += f >> KPF_ZERO_PAGE & 1;
		t.huge += (f >> KPF_THP & 1) | (f >> KPF_HUGE & 1);
		t.head += f >> KPF_COMPOUND_HEAD & 1;
		t.tail += f >> KPF_COMPOUND_TAIL & 1;
	}
	return t;
}

#define NS 64
static struct hs_sample smp[NS];
static struct hs_sample *ptrs[NS];
static const char *names[NS];
static size_t ns;

static void add(const char *name, void *p, size_t len)
{
	if (ns == NS)
		exit(1);
	memset(&smp[ns], 0, sizeof(smp[ns]));
	smp[ns].seq = ns + 1;
	smp[ns].ptr = (uintptr_t)p;
	smp[ns].requested = smp[ns].allocated = len;
	smp[ns].weight = len + 1;
	ptrs[ns] = &smp[ns];
	names[ns++] = name;
}

static void check(enum hs_kpf_mode mode, const char *mname)
{
	struct hs_residency *r;
	struct hs_residency_stats st;

	if (hs_residency__open(&r, getpid()))
		exit(1);
	hs_residency__set_flags(r, mode);
	if (hs_residency__scan(r, ptrs, ns)) {
		fprintf(stderr, "scan failed\n");
		exit(1);
	}
	hs_residency__stats(r, &st);
	hs_residency__close(r);
	for (size_t i = 0; i < ns; i++) {
		const struct hs_page_res *g = &smp[i].res;
		struct truth t = truth_of(smp[i].ptr, smp[i].allocated);
		int bad = !g->valid || g->pages != t.pages ||
			  g->present != t.present || g->swapped != t.swapped ||
			  g->zero != t.zero || g->huge != t.huge ||
			  g->compound_head != t.head ||
			  g->compound_tail != t.tail ||
			  g->flags_known != (uint8_t)mode;

		if (mode == HS_KPF_SHAPE)
			bad |= g->dirty || g->referenced || g->active || g->ksm;
		else
			bad |= g->dirty > g->present ||
			       g->referenced > g->present ||
			       g->active > g->present;
		if (bad) {
			fails++;
			printf("FAIL %s %s: got pages %u present %u swapped %u "
			       "zero %u huge %u head %u tail %u known %u; "
			       "truth %u %u %u %u %u %u %u\n",
			       mname, names[i], g->pages, g->present,
			       g->swapped, g->zero, g->huge, g->compound_head,
			       g->compound_tail, g->flags_known, t.pages,
			       t.present, t.swapped, t.zero, t.huge, t.head,
			       t.tail);
		}
	}
	printf("%s: %zu samples, kpageflags read for %llu pages in %llu "
	       "preads\n",
	       mname, ns, (unsigned long long)st.kpf_pages,
	       (unsigned long long)st.kpf_reads);
}

static char *map_aligned(size_t len, size_t align)
{
	char *m = mmap(NULL, len + align, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		exit(1);
	return (char *)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));
}

int main(void)
{
	int pipefd[2];
	pid_t child;
	char *small, *thp, *split, *split2, *shared, c = 0;
	struct truth t;
	int status;

	pm_fd = open("/proc/self/pagemap", O_RDONLY);
	kpf_fd = open("/proc/kpageflags", O_RDONLY);
	if (pm_fd < 0 || kpf_fd < 0) {
		fprintf(stderr, "SKIP: needs root for /proc/kpageflags\n");
		return 77;
	}

	/* small pages, one touched in two, in runs of 1..9 */
	small = map_aligned(256 * PG, PG);
	madvise(small, 256 * PG, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < 256; i++)
		if (i % 10 < 1 + i % 9)
			small[i * PG] = 1;
	for (size_t off = 0, k = 1; off + k * PG <= 256 * PG; off += k * PG, k = k % 13 + 1)
		add("small", small + off + 24, k * PG - 48);

	/* PMD-mapped THP */
	thp = map_aligned(2 * HPAGE, HPAGE);
	madvise(thp, 2 * HPAGE, MADV_HUGEPAGE);
	memset(thp, 1, 2 * HPAGE);
	add("thp whole", thp, 2 * HPAGE);
	add("thp one page", thp + 5 * PG, PG);
	add("thp edge", thp + HPAGE - 3 * PG, 6 * PG);
	add("thp odd", thp + 3 * PG + 100, 7 * PG);

	/* PTE-mapped THP: split the PMD by changing one page's protection */
	split = map_aligned(HPAGE, HPAGE);
	madvise(split, HPAGE, MADV_HUGEPAGE);
	memset(split, 1, HPAGE);
	mprotect(split + 100 * PG, PG, PROT_READ);
	add("pte-thp whole", split, HPAGE);
	add("pte-thp first page", split, PG);
	add("pte-thp last page", split + HPAGE - PG, PG);
	add("pte-thp one page", split + 101 * PG, PG);
	add("pte-thp odd", split + 37 * PG + 5, 3 * PG);
	/* holes: pages 196..203 keep their aligned blocks of 4 mapped in
	 * order, not those of 8 (the folio stays large until split) */
	madvise(split + 192 * PG, 4 * PG, MADV_DONTNEED);
	madvise(split + 204 * PG, 4 * PG, MADV_DONTNEED);
	add("pte-thp holes", split + 196 * PG, 8 * PG);
	add("pte-thp hole edge", split + 190 * PG, 3 * PG);

	/* lone pages of a PTE-mapped THP, far (> 64 pages) from any other
	 * sample: their blocks of 4 lie outside the sample */
	split2 = map_aligned(HPAGE, HPAGE);
	madvise(split2, HPAGE, MADV_HUGEPAGE);
	memset(split2, 1, HPAGE);
	mprotect(split2 + 500 * PG, PG, PROT_READ);
	add("pte-thp lone page 1", split2 + 1 * PG, 1);
	add("pte-thp lone page 130", split2 + 130 * PG + 4000, 96);
	add("pte-thp lone page 263", split2 + 263 * PG, PG);

	/* pages shared with a child (not exclusively mapped) */
	shared = map_aligned(32 * PG, PG);
	madvise(shared, 32 * PG, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < 32; i += 3)
		shared[i * PG] = 1;
	add("shared", shared, 32 * PG);
	add("shared one page", shared + 3 * PG, PG);

	/* only `shared` goes to the child: the rest stays exclusive */
	madvise(small, 256 * PG, MADV_DONTFORK);
	madvise(thp, 2 * HPAGE, MADV_DONTFORK);
	madvise(split, HPAGE, MADV_DONTFORK);
	madvise(split2, HPAGE, MADV_DONTFORK);
	if (pipe(pipefd))
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		close(pipefd[1]);
		if (read(pipefd[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(pipefd[0]);

	t = truth_of((uintptr_t)thp, 2 * HPAGE);
	if (t.huge == t.pages)
		printf("THP: PMD-mapped huge pages present\n");
	else
		printf("THP not available (%u of %u pages huge): huge part "
		       "not exercised\n", t.huge, t.pages);
	t = truth_of((uintptr_t)split, HPAGE);
	printf("PTE-mapped THP: %u of %u pages huge\n", t.huge, t.pages);

	check(HS_KPF_SHAPE, "shape");
	check(HS_KPF_ALL, "all");

	if (write(pipefd[1], &c, 1) != 1)
		kill(child, SIGKILL);
	waitpid(child, &status, 0);
	if (fails) {
		printf("FAIL: %d mismatches\n", fails);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
