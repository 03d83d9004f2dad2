/* SPDX-License-Identifier: MIT */
/*
 * residency.h - residency scan options and counters beyond heapscope.h
 * (hs_residency__open / __scan / __close and struct hs_page_res are
 * declared there).
 */
#ifndef HS_RESIDENCY_H
#define HS_RESIDENCY_H

#include <stdint.h>

#include "heapscope.h"

/*
 * Which present pages have their /proc/kpageflags entry read.  It is also
 * the value a scanned sample's res.flags_known takes (0 when PFNs are
 * hidden, i.e. no CAP_SYS_ADMIN, or kpageflags is not readable).
 */
enum hs_kpf_mode {
	HS_KPF_NONE = 0, /* pagemap only: zero pages by PFN, nothing else */
	/* Every present page: zero, huge, compound head / tail, dirty,
	 * referenced, active and KSM counts are exact.  One pread per
	 * cluster of nearby PFNs: ~2-3 ms for 4400 scattered PFNs here. */
	HS_KPF_ALL = 1,
	/* Default.  Only the pages whose flags can change a profile value:
	 * zero, huge, compound head / tail are exact (the caveat in
	 * docs/profiles.md aside); dirty, referenced, active, KSM are left 0.
	 * A present page is read when it is not exclusively mapped (the zero
	 * page and KSM pages never are exclusive) or when the aligned block
	 * of 4 PFNs around its PFN (2 for file / shared pages) is mapped in
	 * order around it, as every page of a mapped large folio is; the
	 * other pages are single small pages of this process alone. */
	HS_KPF_SHAPE = 2,
};

/* Which kpageflags entries the next scans read (default HS_KPF_SHAPE). */
void hs_residency__set_flags(struct hs_residency *r, enum hs_kpf_mode m);
/* Merge PFNs up to gap apart into one kpageflags pread (default 64;
 * larger trades bytes read for syscalls; capped at 65536). */
void hs_residency__set_flags_gap(struct hs_residency *r, uint32_t gap);

/* What the last scan read. */
struct hs_residency_stats {
	uint64_t pagemap_reads, pagemap_entries;
	uint64_t kpf_pages;		/* present pages whose flags were read */
	uint64_t kpf_reads, kpf_entries; /* preads, entries incl. gaps */
};
void hs_residency__stats(const struct hs_residency *r,
			 struct hs_residency_stats *st);

#endif
