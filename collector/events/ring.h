/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the BPF side of the event stream (ring.c), shared by `record`
 * and the daemon: the skeleton opened and loaded, libbpf's messages, the
 * ring buffer consumed in bounded batches, and the per-CPU lost counters.
 * Needs the skeleton and libbpf: linked into the command only (the
 * BPF-free rest of the pipeline is hs_collector_core).  A struct hs_ring
 * is used by one thread at a time (the daemon: under its lock).
 */
#ifndef HS_RING_H
#define HS_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapscope.skel.h"
#include "heapscope_event.h"

/* libbpf's own messages go to stderr only when verbose (-v); failures are
 * reported by the collector with a remedy instead.  Call once, first. */
void hs_libbpf__print(bool verbose);

/*
 * Open and load the BPF object (exit/exec of tracked pids only).  0 with
 * *out set, or -errno with *out NULL and *what / *hint set for the
 * message "cannot <what>: <strerror><hint>" (hint is "" or a remedy).
 */
int hs_bpf__open_load(struct heapscope_bpf **out, const char **what,
		      const char **hint);

/* Called for each record of the ring buffer (data: size bytes, not yet
 * validated: hs_event__valid).  Its return value is ignored. */
typedef int (*hs_event_fn)(void *ctx, void *data, size_t size);

/* Records handled per hs_ring__poll / __consume: under a sustained stream
 * libbpf's consume loop would never return, and -d, signals or the
 * daemon's HTTP handlers (waiting for its lock) would not be served. */
#define HS_RING_BATCH 4096

struct hs_ring {
	struct ring_buffer *rb;
	hs_event_fn fn;
	void *ctx;
	unsigned left; /* records left in this batch */
};

/* Consume the ring-buffer map map_fd with fn(ctx, ...).  r must not move
 * while open.  0 or -errno. */
int hs_ring__open(struct hs_ring *r, int map_fd, hs_event_fn fn, void *ctx);
/* Free the ring buffer (r zeroed); r may be zeroed or closed already. */
void hs_ring__close(struct hs_ring *r);
/* Wait up to timeout_ms for records and handle one batch of them: the
 * number handled (0: none came), -EAGAIN (the batch was full: call again),
 * -EINTR or -errno. */
int hs_ring__poll(struct hs_ring *r, int timeout_ms);
/* Handle one batch of what is there without waiting: as hs_ring__poll. */
int hs_ring__consume(struct hs_ring *r);
/* Handle what is there, batch after batch, for at most max_ns (a target
 * that keeps allocating cannot hold the caller).  No-op on a NULL or
 * closed r. */
void hs_ring__drain(struct hs_ring *r, uint64_t max_ns);
/* The fd to epoll for records (the BPF side wakes it only when the ring
 * buffer fills up, heapscope.bpf.c). */
int hs_ring__epoll_fd(const struct hs_ring *r);

/* Sum the per-CPU `lost` map map_fd into out[HS_LOST_NR].  A slot that
 * cannot be read keeps its value in out; 0, or the first -errno
 * (-ENOMEM). */
int hs_lost__read(int map_fd, uint64_t out[HS_LOST_NR]);

#endif /* HS_RING_H */
