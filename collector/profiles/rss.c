// SPDX-License-Identifier: MIT
/*
 * rss.c - where a process's RSS went: the kernel's figures
 * (/proc/PID/smaps_rollup) split by the allocator's exact counters (its
 * statistics block, target/stats_block.c) into the parts of
 * docs/profiles.md ("Where RSS went"), with the sampled estimate beside
 * heap_in_use.  Rendering is export/export_rss.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profiles.h"
#include "target.h"

const char *const hs_rss_part_names[HS_RSS_NPARTS] = {
	[HS_RSS_HEAP_IN_USE] = "heap_in_use",
	[HS_RSS_HEAP_FREE_COMMITTED] = "heap_free_committed",
	[HS_RSS_THREAD_CACHES] = "thread_caches",
	[HS_RSS_ALLOCATOR_METADATA] = "allocator_metadata",
	[HS_RSS_SAMPLING_COST] = "sampling_cost",
	[HS_RSS_OTHER_ANONYMOUS] = "other_anonymous",
	[HS_RSS_FILE_BACKED] = "file_backed",
};

/* Bytes of the library's registry per slot touched: the record, its
 * extension and its free-list link (allocator/sampling/registry.c). */
#define REGISTRY_SLOT_BYTES                                                    \
	(sizeof(struct heapscope_record) +                                     \
	 sizeof(struct heapscope_record_ext) + sizeof(uint32_t))

static uint64_t sub_sat(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* Take up to *over bytes off *part. */
static void take(uint64_t *part, uint64_t *over)
{
	uint64_t n = *part < *over ? *part : *over;

	*part -= n;
	*over -= n;
}

void hs_rss__compute(const struct hs_stats_snapshot *s, uint64_t rss,
		     uint64_t anon, uint64_t alloc_limit,
		     int64_t sampled_resident, int64_t large_resident,
		     struct hs_rss_table *t)
{
	const uint64_t *v = s->v;
	uint64_t *p = t->parts;
	uint64_t small_out, alloc_sum, over, slots;

	memset(p, 0, sizeof(t->parts));
	if (anon > rss)
		anon = rss;
	t->rss_bytes = rss;
	t->anon_bytes = anon;
	t->consistent = s->consistent;
	/* Objects out of the central lists: the program's and the thread
	 * caches' (a sample's proxy counts as its size-class object). */
	small_out = sub_sat(sub_sat(v[HEAPSCOPE_STAT_SMALL_SPAN_BYTES],
				    v[HEAPSCOPE_STAT_SPAN_WASTE_BYTES]),
			    v[HEAPSCOPE_STAT_CENTRAL_FREE_BYTES]);
	t->thread_cache_bytes =
		s->tcache_bytes < small_out ? s->tcache_bytes : small_out;
	t->central_free_bytes = v[HEAPSCOPE_STAT_CENTRAL_FREE_BYTES];
	t->pageheap_free_bytes = v[HEAPSCOPE_STAT_PAGEHEAP_FREE_BYTES];
	t->region_cached_bytes = v[HEAPSCOPE_STAT_CACHED_BYTES];
	t->span_waste_bytes = v[HEAPSCOPE_STAT_SPAN_WASTE_BYTES];
	t->large_bytes = v[HEAPSCOPE_STAT_PAGEHEAP_LARGE_BYTES] +
			 v[HEAPSCOPE_STAT_REGION_LARGE_BYTES];
	t->sampled_pages_bytes = v[HEAPSCOPE_STAT_PAGES_BYTES];
	slots = v[HEAPSCOPE_STAT_RECORD_BYTES] /
		sizeof(struct heapscope_record);
	t->registry_bytes = slots * REGISTRY_SLOT_BYTES;
	t->unwind_cache_bytes =
		v[HEAPSCOPE_STAT_SAMPLES_TOTAL] ? s->unwind_cache_bytes : 0;
	t->live_samples = v[HEAPSCOPE_STAT_LIVE];
	t->thread_caches_walked = s->tcaches;
	t->inuse_estimate = v[HEAPSCOPE_STAT_INUSE_ESTIMATE];

	/* The exact count of bytes handed out, and the part: the same with
	 * each large block's resident pages only (measured through the heap
	 * map and pagemap; small objects' pages are taken as resident). */
	t->heap_in_use_allocated =
		small_out - t->thread_cache_bytes + t->large_bytes;
	t->large_measured = large_resident >= 0;
	t->large_resident_bytes = large_resident < 0 ? t->large_bytes
				  : (uint64_t)large_resident < t->large_bytes
					  ? (uint64_t)large_resident
					  : t->large_bytes;
	p[HS_RSS_HEAP_IN_USE] =
		small_out - t->thread_cache_bytes + t->large_resident_bytes;
	/* central lists and transfer caches are free objects the heap
	 * keeps committed, not any thread's */
	p[HS_RSS_HEAP_FREE_COMMITTED] =
		t->pageheap_free_bytes + t->region_cached_bytes +
		t->span_waste_bytes + t->central_free_bytes;
	p[HS_RSS_THREAD_CACHES] = t->thread_cache_bytes;
	/* the part of the metadata reservations handed out (bump): the
	 * rest was never touched */
	t->metadata_reserved_bytes = v[HEAPSCOPE_STAT_META_BYTES];
	p[HS_RSS_ALLOCATOR_METADATA] =
		v[HEAPSCOPE_STAT_META_USED_BYTES] < t->metadata_reserved_bytes
			? v[HEAPSCOPE_STAT_META_USED_BYTES]
			: t->metadata_reserved_bytes;
	/* A sample's own pages, but for samples without a proxy: those
	 * pages are the block itself, in heap_in_use already.  Measured
	 * resident when possible: a small sample touches one OS page of
	 * its 8 KiB. */
	t->sampled_measured = sampled_resident >= 0;
	p[HS_RSS_SAMPLING_COST] =
		(sampled_resident >= 0
			 ? (uint64_t)sampled_resident
			 : sub_sat(v[HEAPSCOPE_STAT_PAGES_BYTES],
				   v[HEAPSCOPE_STAT_SAMPLED_LARGE_BYTES])) +
		t->registry_bytes + t->unwind_cache_bytes;

	/* The counters are committed bytes; pages never touched (metadata
	 * reserved ahead, free spans never written) are not resident.
	 * What exceeds anonymous RSS comes off the figures that can hold
	 * such pages, heap_in_use last: it stays the exact count. */
	alloc_sum = 0;
	for (int i = HS_RSS_HEAP_IN_USE; i <= HS_RSS_SAMPLING_COST; i++)
		alloc_sum += p[i];
	if (alloc_limit > anon)
		alloc_limit = anon;
	t->anon_outside_bytes = anon - alloc_limit;
	over = sub_sat(alloc_sum, alloc_limit);
	t->unresident_bytes = over;
	take(&p[HS_RSS_HEAP_FREE_COMMITTED], &over);
	take(&p[HS_RSS_ALLOCATOR_METADATA], &over);
	take(&p[HS_RSS_SAMPLING_COST], &over);
	take(&p[HS_RSS_THREAD_CACHES], &over);
	t->unresident_bytes -= over; /* what could not be taken off */
	alloc_sum = 0;
	for (int i = HS_RSS_HEAP_IN_USE; i <= HS_RSS_SAMPLING_COST; i++)
		alloc_sum += p[i];
	p[HS_RSS_OTHER_ANONYMOUS] = sub_sat(anon, alloc_sum);
	p[HS_RSS_FILE_BACKED] = rss - anon;
	t->parts_sum = 0;
	for (int i = 0; i < HS_RSS_NPARTS; i++)
		t->parts_sum += p[i];
}

/*
 * The anonymous pages the allocator could own, from /proc/PID/smaps: those
 * of unnamed anonymous mappings and of the allocator's own object
 * (lib_path: its static data, e.g. the unwind cache).  Not its: the
 * anonymous (copy-on-write) pages of other files' mappings, [stack],
 * [heap] (brk), and the like.  Bytes into *limit; -errno.
 */
static int read_smaps(pid_t pid, const char *lib_path, uint64_t *limit)
{
	char path[64], line[PATH_MAX + 128];
	unsigned long long kb;
	bool mine = false;
	uint64_t sum = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		int name = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi,
			   &name) >= 2 &&
		    name > 0) {
			char *n = line + name;

			n[strcspn(n, "\n")] = 0;
			/* unnamed, or the allocator's object (its .bss) */
			mine = !*n || (lib_path[0] && !strcmp(n, lib_path));
			continue;
		}
		if (mine && sscanf(line, "Anonymous: %llu kB", &kb) == 1)
			sum += (uint64_t)kb << 10;
	}
	fclose(f);
	*limit = sum;
	return 0;
}

/* Rss and Anonymous of /proc/PID/smaps_rollup, bytes. */
static int read_rollup(pid_t pid, uint64_t *rss, uint64_t *anon)
{
	char path[64], line[256];
	unsigned long long kb;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Rss: %llu kB", &kb) == 1) {
			*rss = (uint64_t)kb << 10;
			found |= 1;
		} else if (sscanf(line, "Anonymous: %llu kB", &kb) == 1) {
			*anon = (uint64_t)kb << 10;
			found |= 2;
		}
	}
	fclose(f);
	/* an exited process (zombie) has an empty rollup */
	return found == 3 ? 0 : -ESRCH;
}

/* Bytes of blocks the heap map may name beyond the counters' (races). */
#define HEAP_MAP_SLACK ((uint64_t)256 << 20)

/* The most pages of one sample measured (1 GiB). */
#define MAX_SAMPLE_PAGES (1u << 18)

/*
 * Resident bytes of the pages of the live samples with a proxy, from the
 * registry's records (their span_start, span_bytes) and
 * /proc/PID/pagemap (bit 63: present).  -1 when either cannot be read.
 */
static int64_t sampled_resident(const struct hs_target *tg)
{
	struct hs_registry_snapshot snap;
	uint64_t addr, *ent = NULL, total = 0;
	pid_t pid = tg->pid;
	char path[64];
	int fd;

	if (hs_registry__locate(tg, &addr) ||
	    hs_registry__read(hs_registry__read_process, &pid, addr, &snap))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ent = malloc(MAX_SAMPLE_PAGES * sizeof(*ent));
	if (fd < 0 || !ent) {
		total = (uint64_t)-1;
		goto out;
	}
	for (size_t i = 0; i < snap.n; i++) {
		const struct heapscope_record *r = &snap.recs[i];
		uint64_t pages = r->span_bytes / 4096;
		ssize_t got;

		/* untrusted: aligned, bounded, no wrap */
		if (!r->proxy || !pages || r->span_start % 4096 ||
		    r->span_bytes % 4096 || pages > MAX_SAMPLE_PAGES ||
		    r->span_start / 4096 > (UINT64_MAX >> 4) - pages)
			continue;
		got = pread(fd, ent, pages * sizeof(*ent),
			    (off_t)(r->span_start / 4096 * sizeof(*ent)));
		if (got != (ssize_t)(pages * sizeof(*ent))) {
			total = (uint64_t)-1;
			goto out;
		}
		for (uint64_t k = 0; k < pages; k++)
			total += (ent[k] >> 63) ? 4096 : 0;
	}
out:
	free(ent);
	if (fd >= 0)
		close(fd);
	hs_registry__free(&snap);
	return total == (uint64_t)-1 ? -1 : (int64_t)total;
}

/*
 * The residency of the in-use large blocks (and of every used run of the
 * region, proxied samples' pages included) through the heap map of a
 * version-2 block, into *r.  0, or -errno (-ENOENT: the library publishes
 * no map, a version-1 block).
 */
static int large_resident(pid_t pid, int mem_fd,
			  const struct hs_stats_snapshot *s,
			  struct hs_heap_resident *r)
{
	const uint64_t *v = s->v;
	struct heapscope_heap_map m;
	uint64_t budget;
	char path[64];
	int pm, err;

	if (!s->heap_map_addr)
		return -ENOENT;
	/* The blocks the map may name: the large ones and every sample's
	 * pages, as counted a moment ago, with a margin for the program's
	 * allocations between the reads. */
	budget = v[HEAPSCOPE_STAT_PAGEHEAP_LARGE_BYTES] +
		 v[HEAPSCOPE_STAT_REGION_LARGE_BYTES] +
		 v[HEAPSCOPE_STAT_PAGES_BYTES];
	budget += budget / 4 + HEAP_MAP_SLACK;
	err = hs_heap_map__read(hs_stats_block__read_mem, &mem_fd,
				s->heap_map_addr, &m);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	pm = open(path, O_RDONLY | O_CLOEXEC);
	if (pm < 0)
		return -errno;
	err = hs_heap_map__resident(hs_stats_block__read_mem, &mem_fd, pm, &m,
				    budget, r);
	close(pm);
	return err;
}

int hs_rss_table_read_target(const struct hs_target *tg, struct hs_rss_table *t)
{
	struct hs_stats_snapshot s;
	struct hs_heap_resident r;
	uint64_t addr, rss = 0, anon = 0, limit = 0;
	int64_t sampled, large = -1;
	char path[64];
	int fd, err;

	memset(t, 0, sizeof(*t));
	t->pid = tg->pid;
	err = hs_target__symbol(tg, HEAPSCOPE_STATS_SYMBOL, &addr);
	if (err)
		return err == -ENOENT ? -EPROTONOSUPPORT : err;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)tg->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = hs_stats_block__read(hs_stats_block__read_mem, &fd, addr, &s);
	if (!err)
		t->heap_map_error = large_resident(tg->pid, fd, &s, &r);
	close(fd);
	/* a process that exits under the read leaves nothing to read */
	if (err == -EFAULT || err == -EIO)
		err = hs_proc__alive(tg->pid) ? -EBADMSG : -ESRCH;
	if (err)
		return err;
	sampled = sampled_resident(tg);
	err = read_rollup(tg->pid, &rss, &anon);
	if (!err)
		err = read_smaps(tg->pid, tg->path, &limit);
	if (err)
		return err;
	/* In use: the spans' resident pages, and the region's used runs'
	 * but for the proxied samples' own pages (sampling_cost). */
	if (!t->heap_map_error && sampled >= 0) {
		t->large_span_resident = r.span_resident;
		t->large_swapped_bytes = r.swapped;
		large = (int64_t)(r.span_resident +
				  sub_sat(r.run_resident, (uint64_t)sampled));
	}
	hs_rss__compute(&s, rss, anon, limit, sampled, large, t);
	t->pid = tg->pid;
	return 0;
}

int hs_rss_table_read(pid_t pid, const char *lib, struct hs_rss_table *t)
{
	struct hs_target tg;
	int err;

	memset(t, 0, sizeof(*t));
	if (!hs_proc__alive(pid))
		return -ESRCH;
	err = hs_target__find(&tg, pid, lib);
	if (err)
		return err;
	return hs_rss_table_read_target(&tg, t);
}
