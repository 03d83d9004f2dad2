// SPDX-License-Identifier: MIT
/*
 * residency.c - what the kernel did with each live sampled allocation:
 * /proc/PID/pagemap for the OS pages under the object (present, swapped,
 * PFN, exclusively mapped) and /proc/kpageflags for present PFNs
 * (THP / compound, huge, zero page; dirty, referenced, active, KSM).
 *
 * Reads are batched: the samples are sorted by address and the pagemap
 * entries of nearby samples (gaps up to MERGE_GAP pages) are read with one
 * pread; the PFNs whose flags are wanted are sorted and read from
 * kpageflags the same way (gaps up to flags_gap PFNs).  Sampled
 * allocations own their pages (allocator/sampled.c), so what is measured
 * here is the sampled object alone, never a neighbour.
 *
 * kpageflags is the expensive part: PFNs of 4 KiB pages are scattered over
 * physical memory (shuffled page allocator), so it costs about one pread
 * (1.5-4 us) per sampled page cluster.  By default (HS_KPF_SHAPE,
 * residency.h) only the pages whose flags can change a profile value are
 * read: pages that are not exclusively mapped (the zero page, KSM, shared
 * pages) and pages whose aligned PFN block of 4 (2 for file pages) is
 * mapped in order around them (every page of a mapped large folio: THP,
 * mTHP, hugetlb).  An exclusively mapped page without such a block is a
 * small page of its own: not zero, not huge, not compound.
 *
 * PFNs need CAP_SYS_ADMIN: without it the kernel reports PFN 0 and the
 * kpageflags part (huge, zero, dirty, ...) is left unknown (flags_known
 * = 0); present / swapped still work for the process's owner.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "profiles.h"

#define OS_PAGE_SHIFT 12
#define MERGE_GAP 64		    /* pages of pagemap read in vain at most */
#define FLAGS_GAP 64		    /* PFNs of kpageflags read in vain at most */
#define FLAGS_GAP_MAX 65536
#define MAX_SAMPLE_PAGES (1u << 22) /* 16 GiB: larger is not a sample */
#define MAX_RUN_PAGES (1u << 16)    /* merged pagemap run (512 KiB buffer) */
#define USER_TOP (1ull << 47)
/* Large folios are naturally aligned in PFN space: anonymous ones have
 * order >= 2 (THP_ORDERS_ALL_ANON), file / shmem ones order >= 1. */
#define ANON_BLOCK 4
#define FILE_BLOCK 2
#define EDGE (ANON_BLOCK - 1) /* pagemap entries read around each run */

/* /proc/PID/pagemap (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_PFN_MASK ((1ull << 55) - 1)
#define PM_EXCLUSIVE (1ull << 56)
#define PM_FILE (1ull << 61)
#define PM_SWAPPED (1ull << 62)
#define PM_PRESENT (1ull << 63)

/* /proc/kpageflags bits (include/uapi/linux/kernel-page-flags.h) */
#define KPF_REFERENCED 2
#define KPF_DIRTY 4
#define KPF_ACTIVE 6
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_HUGE 17
#define KPF_KSM 21
#define KPF_THP 22
#define KPF_ZERO_PAGE 24

struct range {
	uint64_t first; /* OS page number */
	uint32_t npages;
	uint32_t idx;	/* into the samples array */
	uint32_t nopfn; /* present pages without a PFN (no CAP_SYS_ADMIN) */
};

struct pfn_ref {
	uint64_t pfn;
	uint32_t idx; /* sample */
};

struct hs_residency {
	pid_t pid;
	int pagemap_fd;
	int kpageflags_fd; /* -1 when not readable */
	enum hs_kpf_mode mode; /* which kpageflags entries (default SHAPE) */
	uint32_t flags_gap;    /* kpageflags merge gap, PFNs */
	struct hs_residency_stats st;
	uint64_t zero_pfn; /* PFN of the shared zero page, 0 = unknown */
	uint64_t *pm;	   /* pagemap buffer */
	size_t pm_cap;	   /* entries */
	uint64_t *kf;	   /* kpageflags buffer */
	size_t kf_cap;
	struct range *ranges;
	size_t ranges_cap;
	struct pfn_ref *pfns;
	size_t pfns_cap;
};

/* The zero page's PFN, from a read-faulted private anonymous page of our
 * own, confirmed by its KPF_ZERO_PAGE flag (some kernels give read faults
 * a page of their own; then, and without CAP_SYS_ADMIN, 0 = unknown, and
 * zero pages are only recognised through kpageflags). */
static uint64_t find_zero_pfn(int kpageflags_fd)
{
	volatile const char *p;
	uint64_t e = 0, f = 0, pfn;
	int fd;

	if (kpageflags_fd < 0)
		return 0;

	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	(void)p[0];
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pread(fd, &e, 8, (off_t)((uintptr_t)p >> OS_PAGE_SHIFT) * 8) !=
		    8)
			e = 0;
		close(fd);
	}
	munmap((void *)p, 4096);
	pfn = (e & PM_PRESENT) ? e & PM_PFN_MASK : 0;
	if (!pfn || pread(kpageflags_fd, &f, 8, (off_t)(pfn * 8)) != 8 ||
	    !(f & (1ull << KPF_ZERO_PAGE)))
		return 0;
	return pfn;
}

void hs_residency__set_flags(struct hs_residency *r, enum hs_kpf_mode m)
{
	r->mode = m == HS_KPF_ALL || m == HS_KPF_SHAPE ? m : HS_KPF_NONE;
}

void hs_residency__set_flags_gap(struct hs_residency *r, uint32_t gap)
{
	r->flags_gap = gap > FLAGS_GAP_MAX ? FLAGS_GAP_MAX : gap;
}

void hs_residency__stats(const struct hs_residency *r,
			 struct hs_residency_stats *st)
{
	*st = r->st;
}

int hs_residency__open(struct hs_residency **out, pid_t pid)
{
	struct hs_residency *r;
	char path[64];
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	r->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->pagemap_fd < 0) {
		err = -errno;
		free(r);
		return err;
	}
	r->kpageflags_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	r->mode = HS_KPF_SHAPE;
	r->flags_gap = FLAGS_GAP;
	r->zero_pfn = find_zero_pfn(r->kpageflags_fd);
	*out = r;
	return 0;
}

void hs_residency__close(struct hs_residency *r)
{
	if (!r)
		return;
	close(r->pagemap_fd);
	if (r->kpageflags_fd >= 0)
		close(r->kpageflags_fd);
	free(r->pm);
	free(r->kf);
	free(r->ranges);
	free(r->pfns);
	free(r);
}

static int reserve(void **buf, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *nb;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 256;
	while (ncap < need)
		ncap *= 2;
	nb = realloc(*buf, ncap * elem);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

static int cmp_pfn(const void *a, const void *b)
{
	const struct pfn_ref *x = a, *y = b;

	return x->pfn < y->pfn ? -1 : x->pfn > y->pfn;
}

/* Read n 8-byte entries at index first of fd into buf.  Short reads past
 * the end of the address space (pagemap) or of memory (kpageflags) leave
 * zeros, which mean "not present" / "no flags". */
static int read_entries(int fd, uint64_t first, size_t n, uint64_t *buf)
{
	size_t done = 0;

	memset(buf, 0, n * sizeof(*buf));
	while (done < n) {
		ssize_t got = pread(fd, (char *)buf + done * 8, (n - done) * 8,
				    (off_t)((first + done) * 8));

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (got == 0)
			break;
		done += (size_t)got / 8;
		if (got % 8)
			return -EIO;
	}
	return 0;
}

/* Object pages of a sample; false when its fields make no sense. */
static bool sample_pages(const struct hs_sample *s, uint64_t *first,
			 uint32_t *npages)
{
	uint64_t len = s->allocated ? s->allocated : 1, end;

	if (!s->ptr || s->ptr >= USER_TOP || len > USER_TOP - s->ptr)
		return false;
	end = s->ptr + len;
	*first = s->ptr >> OS_PAGE_SHIFT;
	end = (end + (1u << OS_PAGE_SHIFT) - 1) >> OS_PAGE_SHIFT;
	if (end - *first > MAX_SAMPLE_PAGES)
		return false;
	*npages = (uint32_t)(end - *first);
	return true;
}

static void count_pagemap(struct hs_page_res *res, uint64_t e,
			  uint64_t zero_pfn)
{
	if (e & PM_PRESENT) {
		res->present++;
		if (zero_pfn && (e & PM_PFN_MASK) == zero_pfn)
			res->zero++;
		if (e & PM_EXCLUSIVE)
			res->exclusive++;
	} else if (e & PM_SWAPPED) {
		res->swapped++;
	}
}

static void count_flags(struct hs_page_res *res, uint64_t f,
			enum hs_kpf_mode mode)
{
	/* pages whose PFN is the known zero PFN are not looked up here */
	if (f & (1ull << KPF_ZERO_PAGE))
		res->zero++;
	if (f & ((1ull << KPF_THP) | (1ull << KPF_HUGE)))
		res->huge++;
	if (f & (1ull << KPF_COMPOUND_HEAD))
		res->compound_head++;
	if (f & (1ull << KPF_COMPOUND_TAIL))
		res->compound_tail++;
	if (mode != HS_KPF_ALL)
		return; /* SHAPE reads a subset: no partial counts */
	if (f & (1ull << KPF_DIRTY))
		res->dirty++;
	if (f & (1ull << KPF_REFERENCED))
		res->referenced++;
	if (f & (1ull << KPF_ACTIVE))
		res->active++;
	if (f & (1ull << KPF_KSM))
		res->ksm++;
}

/*
 * Could pm[i] (present, PFN pfn) belong to a large folio?  Folios are
 * naturally aligned in PFN space and a mapped folio's pages are mapped in
 * order, so the aligned block of `block` PFNs around pfn is then mapped at
 * the `block` pages around i.  pm[lo, hi) are the entries read.
 */
static bool in_mapped_block(const uint64_t *pm, size_t lo, size_t hi,
			    size_t i, uint64_t pfn, unsigned block)
{
	size_t off = (size_t)(pfn & (block - 1)), start;

	if (i - lo < off)
		return false;
	start = i - off;
	if (hi - start < block)
		return false;
	for (unsigned k = 0; k < block; k++) {
		uint64_t e = pm[start + k];

		if (!(e & PM_PRESENT) || (e & PM_PFN_MASK) != pfn - off + k)
			return false;
	}
	return true;
}

/* Is the kpageflags entry of this present page (PFN pfn != 0) wanted? */
static bool want_flags(const struct hs_residency *r, const uint64_t *pm,
		       size_t lo, size_t hi, size_t i, uint64_t pfn)
{
	uint64_t e = pm[i];

	if (r->mode == HS_KPF_ALL)
		return true;
	/* SHAPE: the zero page (when its PFN is unknown), KSM and shared
	 * pages are never exclusive; large folios show as mapped blocks. */
	if (!(e & PM_EXCLUSIVE))
		return true;
	return in_mapped_block(pm, lo, hi, i, pfn,
			       (e & PM_FILE) ? FILE_BLOCK : ANON_BLOCK);
}

static int scan_pagemap(struct hs_residency *r, struct hs_sample *const *ss,
			size_t nr, size_t *npfns)
{
	const uint64_t vtop = USER_TOP >> OS_PAGE_SHIFT;
	bool flags = r->mode != HS_KPF_NONE && r->kpageflags_fd >= 0;
	size_t i = 0;
	int err;

	*npfns = 0;
	while (i < nr) {
		uint64_t run_first = r->ranges[i].first,
			 run_end = run_first + r->ranges[i].npages, rd_first,
			 rd_end;
		size_t j = i + 1;

		/* Extend the run over samples that start within MERGE_GAP
		 * pages of its end (they may overlap: a broken target), up to
		 * MAX_RUN_PAGES (a single sample may be larger). */
		while (j < nr && r->ranges[j].first <= run_end + MERGE_GAP) {
			uint64_t e = r->ranges[j].first + r->ranges[j].npages;

			if (e > run_end) {
				if (e - run_first > MAX_RUN_PAGES)
					break;
				run_end = e;
			}
			j++;
		}
		/* EDGE pages either side: a page's aligned PFN block may
		 * reach outside its sample (sample_pages keeps both ends
		 * below USER_TOP). */
		rd_first = run_first >= EDGE ? run_first - EDGE : 0;
		rd_end = run_end + EDGE <= vtop ? run_end + EDGE : vtop;
		err = reserve((void **)&r->pm, &r->pm_cap, rd_end - rd_first,
			      sizeof(*r->pm));
		if (err)
			return err;
		err = read_entries(r->pagemap_fd, rd_first, rd_end - rd_first,
				   r->pm);
		if (err)
			return err;
		r->st.pagemap_reads++;
		r->st.pagemap_entries += rd_end - rd_first;
		for (size_t k = i; k < j; k++) {
			struct range *rg = &r->ranges[k];
			struct hs_page_res *res = &ss[rg->idx]->res;
			size_t base = (size_t)(rg->first - rd_first);

			for (uint32_t p = 0; p < rg->npages; p++) {
				uint64_t e = r->pm[base + p],
					 pfn = e & PM_PFN_MASK;

				count_pagemap(res, e, r->zero_pfn);
				if (!(e & PM_PRESENT))
					continue;
				if (!pfn) {
					rg->nopfn++;
					continue;
				}
				if (!flags || pfn == r->zero_pfn ||
				    !want_flags(r, r->pm, 0,
						(size_t)(rd_end - rd_first),
						base + p, pfn))
					continue;
				err = reserve((void **)&r->pfns, &r->pfns_cap,
					      *npfns + 1, sizeof(*r->pfns));
				if (err)
					return err;
				r->pfns[(*npfns)++] =
					(struct pfn_ref){pfn, rg->idx};
			}
		}
		i = j;
	}
	return 0;
}

static int scan_kpageflags(struct hs_residency *r, struct hs_sample *const *ss,
			   size_t npfns)
{
	size_t i = 0;
	int err;

	qsort(r->pfns, npfns, sizeof(*r->pfns), cmp_pfn);
	r->st.kpf_pages = npfns;
	while (i < npfns) {
		uint64_t first = r->pfns[i].pfn, last = first;
		size_t j = i + 1;

		while (j < npfns && r->pfns[j].pfn - last <= r->flags_gap)
			last = r->pfns[j++].pfn;
		err = reserve((void **)&r->kf, &r->kf_cap, last - first + 1,
			      sizeof(*r->kf));
		if (err)
			return err;
		err = read_entries(r->kpageflags_fd, first, last - first + 1,
				   r->kf);
		if (err)
			return err;
		r->st.kpf_reads++;
		r->st.kpf_entries += last - first + 1;
		for (size_t k = i; k < j; k++)
			count_flags(&ss[r->pfns[k].idx]->res,
				    r->kf[r->pfns[k].pfn - first], r->mode);
		i = j;
	}
	return 0;
}

int hs_residency__scan(struct hs_residency *r, struct hs_sample *const *ss,
		       size_t n)
{
	size_t nr = 0, npfns = 0;
	int err;

	memset(&r->st, 0, sizeof(r->st));
	if (n > UINT32_MAX)
		return -EINVAL;
	err = reserve((void **)&r->ranges, &r->ranges_cap, n ? n : 1,
		      sizeof(*r->ranges));
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct range *rg = &r->ranges[nr];

		memset(&ss[i]->res, 0, sizeof(ss[i]->res));
		if (!sample_pages(ss[i], &rg->first, &rg->npages))
			continue; /* res.valid stays 0 */
		rg->idx = (uint32_t)i;
		rg->nopfn = 0;
		ss[i]->res.pages = rg->npages;
		nr++;
	}
	qsort(r->ranges, nr, sizeof(*r->ranges), cmp_range);
	err = scan_pagemap(r, ss, nr, &npfns);
	if (err)
		return err;
	if (npfns) {
		err = scan_kpageflags(r, ss, npfns);
		if (err)
			return err;
	}
	for (size_t i = 0; i < nr; i++) {
		struct hs_page_res *res = &ss[r->ranges[i].idx]->res;

		res->valid = 1;
		/* Present pages without a PFN: no CAP_SYS_ADMIN. */
		if (r->mode != HS_KPF_NONE && r->kpageflags_fd >= 0 &&
		    !r->ranges[i].nopfn)
			res->flags_known = (uint8_t)r->mode;
	}
	return 0;
}

double hs_res_fraction(const struct hs_page_res *res, enum hs_value v)
{
	double pages, present;

	if (!res->valid || !res->pages)
		return 0;
	pages = res->pages;
	/* A page mapped to the shared zero page (read, never written) holds
	 * no memory of its own: it counts as not resident. */
	present = (double)res->present - res->zero;
	switch (v) {
	case HS_VALUE_RESIDENT:
		return present / pages;
	case HS_VALUE_SWAPPED:
		return res->swapped / pages;
	case HS_VALUE_NOT_RESIDENT:
		return (pages - present - res->swapped) / pages;
	case HS_VALUE_HUGE:
		return res->huge / pages;
	default:
		return 1;
	}
}

int hs_profile__scan_residency(struct hs_profile *p, pid_t pid)
{
	struct hs_residency *r;
	struct hs_sample **ss;
	size_t n;
	int err;

	err = hs_residency__open(&r, pid);
	if (err)
		return err;
	err = hs_profile__samples(p, &ss, &n);
	if (!err) {
		err = hs_residency__scan(r, ss, n);
		free(ss);
	}
	hs_residency__close(r);
	return err;
}
