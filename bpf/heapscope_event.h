/* SPDX-License-Identifier: MIT */
/*
 * heapscope_event.h - types shared by bpf/heapscope.bpf.c and the collector:
 * the ring-buffer event, the lost-event counter slots.  Fixed-width fields,
 * explicit padding, size pinned, so the BPF and the user-space view agree.
 */
#ifndef HEAPSCOPE_EVENT_H
#define HEAPSCOPE_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define HS_EVENT_MAGIC 0x56455348u /* "HSEV" little endian */
#define HS_EVENT_VERSION 1u
#define HS_EVENT_MAX_FRAMES 64 /* = HEAPSCOPE_MAX_FRAMES */
#define HS_RINGBUF_BYTES (16u << 20)
/* BPF ring buffers are a power of two of pages */
_Static_assert((HS_RINGBUF_BYTES & (HS_RINGBUF_BYTES - 1)) == 0 &&
		       HS_RINGBUF_BYTES % 4096 == 0,
	       "ring buffer size");
/* pids the `tracked_pids` map holds (beyond: exits seen by sweeps) */
#define HS_TRACKED_PIDS_MAX 1024

enum hs_event_type {
	HS_EV_ALLOC = 1, /* sample_alloc */
	HS_EV_FREE = 2,	 /* sample_free */
	HS_EV_RATE = 3,	 /* rate_change */
	HS_EV_EXIT = 4,	 /* a tracked process exited (whole thread group) */
	HS_EV_EXEC = 5,	 /* a tracked process called execve */
	/* the OOM killer chose a tracked process (oom/mark_victim): pid and
	 * comm are the victim's (tid its thread), requested its uid; the
	 * other fields are the killer's context (cgroup_id: the task that
	 * ran out of memory) */
	HS_EV_OOM = 6,
};

/* hs_event.flags */
#define HS_EVF_STACK_TRUNCATED 0x1u /* depth argument was > 64, clamped */
#define HS_EVF_STACK_FAULT 0x2u	    /* stack could not be read; depth = 0 */
/* alloc/free from a compatible probe (otel_memory / ddheap, abi.h):
 * ptr; alloc: requested = allocated = size, weight = estimated bytes (not
 * units of r + 1); no seq (0); stack from bpf_get_stack (frame pointers),
 * stack[0] = probe address + 1 so that symbolizing "return address - 1"
 * names the probe's own function */
#define HS_EVF_COMPAT 0x4u

/* Slots of the per-CPU `lost` array map: HS_LOST_NR of them, the map's
 * max_entries and the length of every collector array of lost counts. */
enum hs_lost_slot {
	HS_LOST_RINGBUF = 0, /* bpf_ringbuf_reserve failed: event dropped */
	HS_LOST_STACK = 1,   /* bpf_probe_read_user of the stack failed */
	HS_LOST_ARGS = 2,    /* a USDT argument could not be fetched */
	HS_LOST_NR,	     /* number of slots */
};

struct hs_event {
	__u32 magic;	  /* HS_EVENT_MAGIC */
	__u16 version;	  /* HS_EVENT_VERSION */
	__u16 size;	  /* sizeof(struct hs_event), bytes */
	__u32 type;	  /* enum hs_event_type */
	__u32 flags;	  /* HS_EVF_* */
	__u32 pid;	  /* thread-group id, init pid namespace */
	__u32 tid;	  /* thread id, init pid namespace */
	__u32 depth;	  /* valid frames in stack[], <= HS_EVENT_MAX_FRAMES */
	__u32 pad0;	  /* zero */
	__u64 ts_ns;	  /* bpf_ktime_get_ns(), CLOCK_MONOTONIC ns */
	__u64 cgroup_id;  /* cgroup v2 id of the current task */
	__u64 ptr;	  /* address returned to / freed by the caller */
	__u64 requested;  /* r, bytes */
	__u64 allocated;  /* a, bytes */
	__u64 alignment;  /* bytes, 0 = default */
	__u64 weight;	  /* W, bytes (units of r + 1), alloc only;
			   * HS_EVF_COMPAT: estimated bytes */
	__u64 seq;	  /* this event's sequence number (alloc/free) */
	__u64 alloc_seq;  /* free: seq of the matching alloc; alloc: = seq */
	__s64 new_period; /* rate_change: bytes */
	__s64 old_period; /* rate_change: bytes */
	char comm[16];	  /* task comm, NUL padded */
	__u64 stack[HS_EVENT_MAX_FRAMES]; /* return addresses, innermost first
					   */
};
_Static_assert(sizeof(struct hs_event) == 648, "hs_event layout");
/* the fields the collector reads, where both sides put them */
_Static_assert(__builtin_offsetof(struct hs_event, ts_ns) == 32 &&
		       __builtin_offsetof(struct hs_event, ptr) == 48 &&
		       __builtin_offsetof(struct hs_event, seq) == 88 &&
		       __builtin_offsetof(struct hs_event, new_period) == 104 &&
		       __builtin_offsetof(struct hs_event, comm) == 120 &&
		       __builtin_offsetof(struct hs_event, stack) == 136,
	       "hs_event field offsets");
_Static_assert(sizeof(((struct hs_event *)0)->stack) ==
		       HS_EVENT_MAX_FRAMES * sizeof(__u64),
	       "hs_event stack");

#endif /* HEAPSCOPE_EVENT_H */
