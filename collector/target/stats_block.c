// SPDX-License-Identifier: MIT
/*
 * stats_block.c - reading the allocator's statistics block (struct
 * heapscope_stats_block, include/heapscope/abi.h, the symbol
 * `heapscope_stats`) of a target from outside, and summing the bytes its
 * thread caches hold.  The target is not trusted: every header field,
 * counter, class size and thread-cache link is checked against fixed
 * bounds, the walk is bounded and refuses a cycle, and reads go through a
 * reader callback so the parser is testable against crafted buffers
 * (tests/test_stats_block_parse.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target.h"

int hs_stats_block__read_mem(void *ctx, uint64_t addr, void *dst, size_t len)
{
	int fd = *(int *)ctx;
	ssize_t n;

	if (addr > (uint64_t)INT64_MAX - len)
		return -EFAULT;
	n = pread(fd, dst, len, (off_t)addr);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int check_header(const struct heapscope_stats_block *b)
{
	uint64_t lists_end;

	if (b->magic != HEAPSCOPE_STATS_MAGIC ||
	    b->version < HEAPSCOPE_STATS_VERSION_MIN ||
	    b->version > HEAPSCOPE_STATS_VERSION ||
	    b->header_size != sizeof(*b))
		return -EBADMSG;
	if (b->value_count < HEAPSCOPE_STAT_V1_COUNT ||
	    b->value_count > HEAPSCOPE_STATS_MAX_VALUES || b->class_count < 2 ||
	    b->class_count > HEAPSCOPE_STATS_MAX_CLASSES)
		return -EBADMSG;
	if (b->class_size[0] != 0)
		return -EBADMSG;
	for (uint32_t c = 1; c < b->class_count; c++)
		if (b->class_size[c] <= b->class_size[c - 1] ||
		    b->class_size[c] > (1u << 24))
			return -EBADMSG;
	if (b->unwind_cache_bytes > (1u << 30))
		return -EBADMSG;
	/* The library stores the count, then the head: a copy can catch a
	 * count with no head yet (none to walk), never a head alone. */
	if (b->tcache_count > HEAPSCOPE_STATS_MAX_CACHES ||
	    (b->tcache_head && !b->tcache_count))
		return -EBADMSG;
	if (!b->tcache_head)
		return 0;
	/* The layout of a cache: links aligned, lists inside the bound. */
	lists_end = (uint64_t)b->tcache_lists_offset +
		    (uint64_t)b->class_count * b->tcache_list_size;
	if (b->tcache_head % 8 || b->tcache_next_offset % 8 ||
	    b->tcache_next_offset + 8ull > HS_STATS_MAX_TCACHE_BYTES ||
	    b->tcache_list_size < 4 ||
	    b->tcache_list_size > HS_STATS_MAX_LIST_SIZE ||
	    b->tcache_length_offset % 4 ||
	    b->tcache_length_offset + 4ull > b->tcache_list_size ||
	    lists_end > HS_STATS_MAX_TCACHE_BYTES)
		return -EBADMSG;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

bool hs_target__has_repeat(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 1; i < n; i++)
		if (v[i] == v[i - 1])
			return true;
	return false;
}

/* Sum the bytes on the thread caches' lists (racy per list, each count
 * exact at some moment: the threads keep running). */
static int sum_tcaches(hs_mem_read_fn rd, void *ctx,
		       const struct heapscope_stats_block *b,
		       struct hs_stats_snapshot *out)
{
	size_t span = (size_t)b->class_count * b->tcache_list_size;
	uint64_t *seen = NULL, at = b->tcache_head, sum = 0, n = 0;
	unsigned char *lists = NULL;
	int err = 0;

	if (!at)
		return 0;
	lists = malloc(span);
	seen = malloc(b->tcache_count * sizeof(*seen));
	if (!lists || !seen) {
		err = -ENOMEM;
		goto out;
	}
	while (at) {
		uint64_t next;

		if (n == b->tcache_count || at % 8 ||
		    at > UINT64_MAX - HS_STATS_MAX_TCACHE_BYTES) {
			err = -EBADMSG; /* longer than stated, or bad link */
			goto out;
		}
		seen[n++] = at;
		err = rd(ctx, at + b->tcache_lists_offset, lists, span);
		if (!err)
			err = rd(ctx, at + b->tcache_next_offset, &next,
				 sizeof(next));
		if (err)
			goto out;
		for (uint32_t c = 1; c < b->class_count; c++) {
			uint32_t len;

			memcpy(&len,
			       lists + (size_t)c * b->tcache_list_size +
				       b->tcache_length_offset,
			       sizeof(len));
			if (len > HS_STATS_MAX_LIST_LENGTH) {
				err = -EBADMSG;
				goto out;
			}
			sum += (uint64_t)len * b->class_size[c];
		}
		at = next;
	}
	/* A cycle visits some address twice. */
	if (hs_target__has_repeat(seen, n)) {
		err = -EBADMSG;
		goto out;
	}
	out->tcache_bytes = sum;
	out->tcaches = n;
out:
	free(lists);
	free(seen);
	return err;
}

int hs_stats_block__read(hs_mem_read_fn rd, void *rd_ctx, uint64_t addr,
			 struct hs_stats_snapshot *out)
{
	struct heapscope_stats_block *b, *again;
	uint64_t small_out;
	int err;

	memset(out, 0, sizeof(*out));
	b = malloc(sizeof(*b));
	again = malloc(sizeof(*again));
	if (!b || !again) {
		err = -ENOMEM;
		goto out;
	}
	err = rd(rd_ctx, addr, b, sizeof(*b));
	if (err)
		goto out;
	for (unsigned i = 0;; i++) {
		err = check_header(b);
		if (err)
			goto out;
		out->retries = i;
		if (i == HS_STATS_MAX_RETRIES)
			break;
		err = rd(rd_ctx, addr, again, sizeof(*again));
		if (err)
			goto out;
		if (!memcmp(b->values, again->values,
			    HEAPSCOPE_STAT_V1_COUNT * sizeof(int64_t))) {
			out->consistent = true;
			break;
		}
		memcpy(b, again, sizeof(*b));
	}
	for (int i = 0; i < HEAPSCOPE_STAT_V1_COUNT; i++) {
		if (b->values[i] > (int64_t)HS_STATS_MAX_VALUE) {
			err = -EBADMSG;
			goto out;
		}
		out->v[i] = b->values[i] > 0 ? (uint64_t)b->values[i] : 0;
	}
	out->unwind_cache_bytes = b->unwind_cache_bytes;
	out->class_count = b->class_count;
	out->version = b->version;
	/* version 1 has no heap map (its field was reserved, 0) */
	out->heap_map_addr = b->version >= 2 ? b->heap_map : 0;
	err = sum_tcaches(rd, rd_ctx, b, out);
	if (err)
		goto out;
	/* Cached objects left the central lists: they cannot exceed what
	 * did (the two are read at different moments). */
	small_out = out->v[HEAPSCOPE_STAT_SMALL_SPAN_BYTES];
	small_out -= small_out < out->v[HEAPSCOPE_STAT_SPAN_WASTE_BYTES]
			     ? small_out
			     : out->v[HEAPSCOPE_STAT_SPAN_WASTE_BYTES];
	small_out -= small_out < out->v[HEAPSCOPE_STAT_CENTRAL_FREE_BYTES]
			     ? small_out
			     : out->v[HEAPSCOPE_STAT_CENTRAL_FREE_BYTES];
	if (out->tcache_bytes > small_out)
		out->tcache_bytes = small_out;
out:
	free(b);
	free(again);
	return err;
}
