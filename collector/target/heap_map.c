// SPDX-License-Identifier: MIT
/*
 * heap_map.c - which pages of a target's in-use large blocks are
 * resident: the allocator's heap map (struct heapscope_heap_map, abi.h,
 * named by its statistics block version 2) says where the page heap's
 * in-use large spans and the sampled region's used runs are; their
 * entries of /proc/PID/pagemap say which pages the kernel holds.  The
 * target is not trusted: every field is bounded, the span walk is bounded
 * and refuses a cycle, a torn run entry is skipped, and reads go through
 * a reader callback (tests/test_heap_map_parse.c feeds crafted maps).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target.h"

/* The most bytes a span object's fields may lie at. */
#define MAX_SPAN_OFFSET 4096
/* Run entries read at a time, pagemap entries read at a time. */
#define RUN_CHUNK 4096
#define PM_CHUNK 8192
#define OS_PAGE 4096ull
#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)

int hs_heap_map__read(hs_mem_read_fn rd, void *rd_ctx, uint64_t addr,
		      struct heapscope_heap_map *m)
{
	uint64_t region_end;
	int err;

	if (!addr || addr % 8)
		return -EBADMSG;
	err = rd(rd_ctx, addr, m, sizeof(*m));
	if (err)
		return err;
	if (m->magic != HEAPSCOPE_HEAP_MAP_MAGIC ||
	    m->version != HEAPSCOPE_HEAP_MAP_VERSION || m->size != sizeof(*m) ||
	    m->page_shift != 13)
		return -EBADMSG;
	if (m->large_count > HS_HEAP_MAP_MAX_LARGE ||
	    (m->large_head && !m->large_count) || m->large_head % 8 ||
	    m->large_head >= HS_HEAP_MAP_MAX_ADDR)
		return -EBADMSG;
	if (m->span_start_offset % 8 || m->span_npages_offset % 8 ||
	    m->span_next_offset % 8 ||
	    m->span_start_offset + 8ull > MAX_SPAN_OFFSET ||
	    m->span_npages_offset + 8ull > MAX_SPAN_OFFSET ||
	    m->span_next_offset + 8ull > MAX_SPAN_OFFSET)
		return -EBADMSG;
	if (!m->region_base)
		return 0;
	region_end =
		m->region_base + ((uint64_t)m->region_pages << m->page_shift);
	if (m->region_base % (1ull << m->page_shift) ||
	    m->region_pages > HS_HEAP_MAP_MAX_REGION_PAGES ||
	    region_end > HS_HEAP_MAP_MAX_ADDR || !m->run_meta ||
	    m->run_meta >= HS_HEAP_MAP_MAX_ADDR || !m->run_frontier_addr ||
	    m->run_frontier_addr % 4 ||
	    m->run_frontier_addr >= HS_HEAP_MAP_MAX_ADDR ||
	    m->run_entry_size < 8 || m->run_entry_size > 256 ||
	    m->run_tag_offset % 2 ||
	    m->run_tag_offset + 2 > m->run_entry_size ||
	    m->run_len_offset % 4 ||
	    m->run_len_offset + 4 > m->run_entry_size ||
	    m->run_tag_used == m->run_tag_free)
		return -EBADMSG;
	return 0;
}

/* Resident and swapped bytes of [addr, addr + len), page-aligned. */
static int measure(int pm_fd, uint64_t *buf, uint64_t addr, uint64_t len,
		   uint64_t *resident, uint64_t *swapped)
{
	uint64_t page = addr / OS_PAGE, left = len / OS_PAGE;

	while (left) {
		size_t n = left < PM_CHUNK ? (size_t)left : PM_CHUNK;
		ssize_t got = pread(pm_fd, buf, n * sizeof(*buf),
				    (off_t)(page * sizeof(*buf)));

		if (got != (ssize_t)(n * sizeof(*buf)))
			return -EIO;
		for (size_t k = 0; k < n; k++) {
			if (buf[k] & PM_PRESENT)
				*resident += OS_PAGE;
			else if (buf[k] & PM_SWAPPED)
				*swapped += OS_PAGE;
		}
		page += n;
		left -= n;
	}
	return 0;
}

static int walk_spans(hs_mem_read_fn rd, void *ctx, int pm_fd, uint64_t *buf,
		      const struct heapscope_heap_map *m,
		      struct hs_heap_resident *out)
{
	uint64_t at = m->large_head, n = 0, *seen;
	int err = 0;

	if (!at)
		return 0;
	seen = malloc(m->large_count * sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	while (at) {
		uint64_t start, npages, next, addr;

		if (n == m->large_count || at % 8 ||
		    at >= HS_HEAP_MAP_MAX_ADDR) {
			err = -EBADMSG; /* longer than stated, or a bad link */
			goto out;
		}
		seen[n++] = at;
		err = rd(ctx, at + m->span_start_offset, &start, 8);
		if (!err)
			err = rd(ctx, at + m->span_npages_offset, &npages, 8);
		if (!err)
			err = rd(ctx, at + m->span_next_offset, &next, 8);
		if (err)
			goto out;
		if (!npages || npages > HS_HEAP_MAP_MAX_SPAN_PAGES ||
		    start > (HS_HEAP_MAP_MAX_ADDR >> 13) - npages) {
			err = -EBADMSG;
			goto out;
		}
		addr = start << 13;
		out->span_bytes += npages << 13;
		if (out->span_bytes > out->budget) {
			err = -E2BIG;
			goto out;
		}
		err = measure(pm_fd, buf, addr, npages << 13,
			      &out->span_resident, &out->swapped);
		if (err)
			goto out;
		at = next;
	}
	if (hs_target__has_repeat(seen, n)) {
		err = -EBADMSG; /* a cycle */
		goto out;
	}
	out->spans = n;
out:
	free(seen);
	return err;
}

static int walk_runs(hs_mem_read_fn rd, void *ctx, int pm_fd, uint64_t *buf,
		     const struct heapscope_heap_map *m,
		     struct hs_heap_resident *out)
{
	const size_t es = m->run_entry_size;
	uint32_t frontier, lo = 0, hi = 0; /* entries [lo, hi) in chunk */
	unsigned char *chunk;
	int err = 0;

	if (!m->region_base)
		return 0;
	err = rd(ctx, m->run_frontier_addr, &frontier, sizeof(frontier));
	if (err)
		return err;
	if (frontier > m->region_pages)
		frontier = m->region_pages; /* torn or corrupt: the bound */
	if ((uint64_t)frontier * es > HS_HEAP_MAP_MAX_RUN_SCAN)
		return -E2BIG;
	chunk = malloc(RUN_CHUNK * es);
	if (!chunk)
		return -ENOMEM;
	for (uint32_t i = 0; i < frontier;) {
		uint16_t tag;
		uint32_t len;
		const unsigned char *e;

		if (i < lo || i >= hi) {
			uint32_t n = frontier - i < RUN_CHUNK ? frontier - i
							      : RUN_CHUNK;

			err = rd(ctx, m->run_meta + (uint64_t)i * es, chunk,
				 n * es);
			if (err)
				goto out;
			lo = i;
			hi = i + n;
		}
		e = chunk + (size_t)(i - lo) * es;
		memcpy(&tag, e + m->run_tag_offset, sizeof(tag));
		memcpy(&len, e + m->run_len_offset, sizeof(len));
		if ((tag != m->run_tag_used && tag != m->run_tag_free) ||
		    !len || len > frontier - i) {
			i++; /* an interior page, or an entry being changed */
			continue;
		}
		if (tag == m->run_tag_used) {
			uint64_t bytes = (uint64_t)len << 13;

			out->run_bytes += bytes;
			if (out->span_bytes + out->run_bytes > out->budget) {
				err = -E2BIG;
				goto out;
			}
			out->runs++;
			err = measure(pm_fd, buf,
				      m->region_base + ((uint64_t)i << 13),
				      bytes, &out->run_resident, &out->swapped);
			if (err)
				goto out;
		}
		i += len;
	}
out:
	free(chunk);
	return err;
}

int hs_heap_map__resident(hs_mem_read_fn rd, void *rd_ctx, int pagemap_fd,
			  const struct heapscope_heap_map *m, uint64_t budget,
			  struct hs_heap_resident *out)
{
	uint64_t *buf = malloc(PM_CHUNK * sizeof(*buf));
	int err;

	memset(out, 0, sizeof(*out));
	out->budget = budget;
	if (!buf)
		return -ENOMEM;
	err = walk_spans(rd, rd_ctx, pagemap_fd, buf, m, out);
	if (!err)
		err = walk_runs(rd, rd_ctx, pagemap_fd, buf, m, out);
	free(buf);
	return err;
}
