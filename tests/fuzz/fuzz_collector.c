// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/fuzz_collector.c - libFuzzer target over the collector's
 * parsing of untrusted input (issue 7 item 7): the registry reader
 * (registry.c, against a fake target memory image) and the event stream
 * into the live set, the window (allocs / lifetime / peak) and the
 * aggregation (events.c, profile.c, window.c).
 *
 * Input: byte 0 picks the mode.
 *   mode 0: registry.  The rest is the target's memory, mapped at
 *     IMAGE_BASE; the registry header is at IMAGE_BASE + 8 * byte 1.
 *     Reads outside the image fail with -EFAULT, as process_vm_readv
 *     does on unmapped memory.  With byte 2 odd, the header's magic,
 *     version and sizes are forced valid so the fuzzer gets past them.
 *   mode 1: events.  The rest is a stream of ops (1 type byte, then
 *     fields) turned into struct hs_event with a valid or raw header.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "heapscope_event.h"
#include "profiles.h"
#include "target.h"

#define IMAGE_BASE 0x7f0000000000ull

struct image {
	const uint8_t *data;
	size_t len;
	unsigned reads;
};

static int image_read(void *ctx, uint64_t addr, void *dst, size_t len)
{
	struct image *im = ctx;
	if (++im->reads > 100000)
		abort(); /* the reader must not loop without bound */
	if (addr < IMAGE_BASE || addr - IMAGE_BASE > im->len ||
	    len > im->len - (addr - IMAGE_BASE))
		return -EFAULT;
	memcpy(dst, im->data + (addr - IMAGE_BASE), len);
	return 0;
}

static void fuzz_registry(const uint8_t *d, size_t n)
{
	if (n < 3)
		return;
	uint64_t off = 8ull * d[1];
	bool force = d[2] & 1;
	uint8_t *img = malloc(n - 3 + sizeof(struct heapscope_registry) + 8);
	if (!img)
		return;
	size_t len = n - 3;
	memcpy(img, d + 3, len);
	if (force && off + sizeof(struct heapscope_registry) <= len) {
		struct heapscope_registry h;
		memcpy(&h, img + off, sizeof(h));
		h.magic = HEAPSCOPE_REGISTRY_MAGIC;
		h.version = HEAPSCOPE_REGISTRY_VERSION;
		h.header_size = sizeof(struct heapscope_registry);
		h.record_size = sizeof(struct heapscope_record);
		h.max_frames = HEAPSCOPE_MAX_FRAMES;
		/* records mostly inside the image */
		if (d[2] & 2)
			h.records = IMAGE_BASE + (h.records % (len + 1));
		if (d[2] & 4)
			h.generation &= ~1ull;
		memcpy(img + off, &h, sizeof(h));
	}
	struct image im = {.data = img, .len = len};
	struct hs_registry_snapshot s;
	int err = hs_registry__read(image_read, &im, IMAGE_BASE + off, &s);
	if (!err) {
		if (s.n > s.hdr.capacity || s.n > s.hdr.high_water)
			abort();
		struct hs_profile *p = hs_profile__new();
		for (size_t i = 0; p && i < s.n; i++) {
			const struct heapscope_record *r = &s.recs[i];
			struct hs_sample x = {
				.seq = r->seq,
				.ptr = r->ptr,
				.requested = r->requested,
				.allocated = r->allocated,
				.weight = r->weight,
				.depth = r->depth,
			};
			memcpy(x.stack, r->stack, r->depth * sizeof(x.stack[0]));
			hs_profile__alloc(p, &x);
		}
		struct hs_stack_agg *agg = NULL;
		size_t na = 0;
		if (p && hs_profile__aggregate(p, &agg, &na) == 0) {
			for (size_t i = 0; i < na; i++)
				for (int v = 0; v <= HS_VALUE_FRAGMENTATION_AGE; v++)
					(void)hs_agg_value(&agg[i], v);
			free(agg);
		}
		hs_profile__free(p);
		hs_registry__free(&s);
	}
	free(img);
}

static uint64_t take(const uint8_t **d, size_t *n, size_t bytes)
{
	uint64_t v = 0;
	for (size_t i = 0; i < bytes && *n; i++, (*d)++, (*n)--)
		v |= (uint64_t)**d << (8 * i);
	return v;
}

static void fuzz_events(const uint8_t *d, size_t n)
{
	struct hs_events ev = {.pid = 42};
	ev.prof = hs_profile__new();
	ev.win = hs_window__new(0);
	if (!ev.prof || !ev.win)
		goto out;
	static struct hs_event e;
	while (n) {
		uint8_t op = (uint8_t)take(&d, &n, 1);
		memset(&e, 0, sizeof(e));
		if (op == 0xff) { /* raw event bytes */
			size_t k = n < sizeof(e) ? n : sizeof(e);
			memcpy(&e, d, k);
			d += k, n -= k;
			hs_events__handle(&ev, &e, sizeof(e));
			continue;
		}
		e.magic = HS_EVENT_MAGIC;
		e.version = HS_EVENT_VERSION;
		e.size = sizeof(e);
		e.type = op % 6;
		e.pid = op & 0x80 ? 43 : 42;
		e.tid = (uint32_t)take(&d, &n, 1);
		e.depth = (uint32_t)take(&d, &n, 1) % 80;
		e.ts_ns = take(&d, &n, 2) * 1000;
		e.ptr = take(&d, &n, 2) << 12;
		e.requested = take(&d, &n, 3);
		e.allocated = e.requested + take(&d, &n, 1);
		if (op & 0x40)
			e.allocated = take(&d, &n, 8); /* anything */
		e.weight = take(&d, &n, 3);
		e.seq = take(&d, &n, 2);
		e.alloc_seq = e.type == HS_EV_ALLOC ? e.seq : take(&d, &n, 2);
		e.new_period = (int64_t)take(&d, &n, 8);
		for (uint32_t i = 0; i < e.depth && i < HS_EVENT_MAX_FRAMES; i++)
			e.stack[i] = 0x400000 + take(&d, &n, 1) * 16;
		hs_events__handle(&ev, &e, op & 0x20 ? sizeof(e) - 1 : sizeof(e));
		if (e.type == HS_EV_ALLOC)
			hs_window__peak_check(ev.win, ev.prof);
	}
	struct hs_stack_agg *agg = NULL;
	size_t na = 0;
	if (hs_profile__aggregate(ev.prof, &agg, &na) == 0) {
		for (size_t i = 0; i < na; i++)
			for (int v = 0; v <= HS_VALUE_FRAGMENTATION_AGE; v++)
				(void)hs_agg_value(&agg[i], v);
		free(agg);
	}
	agg = NULL;
	if (hs_window__allocs(ev.win, &agg, &na) == 0)
		free(agg);
	agg = NULL;
	if (hs_window__lifetime(ev.win, &agg, &na) == 0)
		free(agg);
	agg = NULL;
	double total;
	if (hs_window__peak(ev.win, &agg, &na, &total) == 0)
		free(agg);
out:
	if (ev.win)
		hs_window__free(ev.win);
	hs_profile__free(ev.prof);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n < 1)
		return 0;
	if (d[0] & 1)
		fuzz_events(d + 1, n - 1);
	else
		fuzz_registry(d + 1, n - 1);
	return 0;
}
