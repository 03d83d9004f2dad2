// SPDX-License-Identifier: MIT
/*
 * ring.c - the BPF side of the event stream for `record` and the daemon
 * alike: opening and loading the skeleton, routing libbpf's messages, the
 * ring buffer consumed in batches of HS_RING_BATCH records, the bounded
 * drain at the end of a recording or before a profile is served, and the
 * per-CPU lost counters summed.  What the records mean is events.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "ring.h"

static bool print_verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	(void)level;
	return print_verbose ? vfprintf(stderr, fmt, args) : 0;
}

void hs_libbpf__print(bool verbose)
{
	print_verbose = verbose;
	libbpf_set_print(libbpf_print);
}

int hs_bpf__open_load(struct heapscope_bpf **out, const char **what,
		      const char **hint)
{
	struct heapscope_bpf *skel = heapscope_bpf__open();
	int err;

	*out = NULL;
	*hint = "";
	if (!skel) {
		*what = "open the BPF object";
		return -errno;
	}
	skel->rodata->trace_all_exits = 0;
	/* A kernel without the oom/mark_victim tracepoint (BTF) must not
	 * fail the whole load: the daemon then sees OOM kills as exits. */
	if (libbpf_find_vmlinux_btf_id("mark_victim", BPF_TRACE_RAW_TP) < 0)
		bpf_program__set_autoload(skel->progs.handle_oom, false);
	err = heapscope_bpf__load(skel);
	if (err) {
		*what = "load the BPF programs";
		*hint = " (run with -v for the verifier log)";
		heapscope_bpf__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct hs_ring *r = ctx;

	r->fn(r->ctx, data, size);
	/* libbpf has consumed this record already: a negative return only
	 * ends the batch. */
	return --r->left ? 0 : -EAGAIN;
}

int hs_ring__open(struct hs_ring *r, int map_fd, hs_event_fn fn, void *ctx)
{
	r->fn = fn;
	r->ctx = ctx;
	r->left = HS_RING_BATCH;
	r->rb = ring_buffer__new(map_fd, on_record, r, NULL);
	return r->rb ? 0 : -errno;
}

void hs_ring__close(struct hs_ring *r)
{
	ring_buffer__free(r->rb);
	r->rb = NULL;
}

int hs_ring__poll(struct hs_ring *r, int timeout_ms)
{
	r->left = HS_RING_BATCH;
	return ring_buffer__poll(r->rb, timeout_ms);
}

int hs_ring__consume(struct hs_ring *r)
{
	r->left = HS_RING_BATCH;
	return ring_buffer__consume(r->rb);
}

void hs_ring__drain(struct hs_ring *r, uint64_t max_ns)
{
	uint64_t t0 = hs_mono_ns();

	if (!r || !r->rb)
		return;
	do {
		if (hs_ring__consume(r) != -EAGAIN)
			return;
	} while (hs_mono_ns() - t0 < max_ns);
}

int hs_ring__epoll_fd(const struct hs_ring *r)
{
	return ring_buffer__epoll_fd(r->rb);
}

int hs_lost__read(int map_fd, uint64_t out[HS_LOST_NR])
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	uint64_t *vals;

	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -ENOENT;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (uint32_t k = 0; k < HS_LOST_NR; k++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(map_fd, &k, vals)) {
			if (!err)
				err = -errno;
			continue;
		}
		for (int c = 0; c < ncpu; c++)
			sum += vals[c];
		out[k] = sum;
	}
	free(vals);
	return err;
}
