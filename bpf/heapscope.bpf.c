// SPDX-License-Identifier: MIT
/*
 * heapscope.bpf.c - thin USDT programs on the heapscope probes (sample_alloc,
 * sample_free, rate_change), on the compatible otel_memory / ddheap probes
 * (alloc, free) and tracepoints on process exit / exec and on the OOM
 * killer's choice of a victim (oom/mark_victim).  Each
 * program copies its arguments, the task's identity and the user call stack
 * into one ring-buffer event (struct hs_event); every event that cannot be
 * delivered is counted in the per-CPU `lost` map, never dropped silently.
 * The probe ABI is include/heapscope/abi.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "heapscope_event.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Set before load by the collector: 0 = report exit/exec of tracked pids only.
 */
const volatile __u32 trace_all_exits = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, HS_RINGBUF_BYTES);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HS_LOST_NR);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* Ring-buffer drops per thread-group id (init pid namespace), so every
 * process's profile can state its own losses; LRU: a long-gone pid's
 * count may be evicted, never a reason to drop an event. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} lost_by_pid SEC(".maps");

/* Thread-group ids (init pid namespace) the collector follows; value unused. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HS_TRACKED_PIDS_MAX);
	__type(key, __u32);
	__type(value, __u8);
} tracked_pids SEC(".maps");

/* Submit without waking the consumer unless the ring buffer is filling
 * up: each wake-up is an IPI (an MSR write, a hypercall in a
 * paravirtualised guest), which was half the cost of a sampled event
 * with the collector attached.  `record` polls every 100 ms and the
 * daemon every 200 ms anyway, and the daemon drains the ring buffer
 * before every profile it serves, so nothing waits for this. */
#define HS_WAKE_BYTES (HS_RINGBUF_BYTES / 8)
static __always_inline void submit(void *e)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);

	bpf_ringbuf_submit(e, avail > HS_WAKE_BYTES ? BPF_RB_FORCE_WAKEUP
						    : BPF_RB_NO_WAKEUP);
}

static __always_inline void count_lost(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&lost, &slot);

	if (v)
		*v += 1;
}

static __always_inline struct hs_event *event_start(__u32 type)
{
	struct hs_event *e;
	__u64 id;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;
		__u64 one = 1, *n;

		count_lost(HS_LOST_RINGBUF);
		n = bpf_map_lookup_elem(&lost_by_pid, &tgid);
		if (n)
			__sync_fetch_and_add(n, 1);
		else
			bpf_map_update_elem(&lost_by_pid, &tgid, &one,
					    BPF_NOEXIST);
		return NULL;
	}
	/* The reservation is not zeroed; clear it all so no stale kernel
	 * bytes reach user space and unused fields read as 0. */
	__builtin_memset(e, 0, sizeof(*e));
	id = bpf_get_current_pid_tgid();
	e->magic = HS_EVENT_MAGIC;
	e->version = HS_EVENT_VERSION;
	e->size = sizeof(*e);
	e->type = type;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->ts_ns = bpf_ktime_get_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

static __always_inline __u64 arg(struct pt_regs *ctx, __u64 n, __u32 *bad)
{
	long val = 0;

	if (bpf_usdt_arg(ctx, n, &val))
		*bad = 1;
	return (__u64)val;
}

static __always_inline void read_stack(struct hs_event *e, __u64 addr,
				       __u64 depth)
{
	__u32 n, bytes;

	if (depth > HS_EVENT_MAX_FRAMES) {
		depth = HS_EVENT_MAX_FRAMES;
		e->flags |= HS_EVF_STACK_TRUNCATED;
	}
	n = depth;
	if (!n)
		return;
	bytes = n * sizeof(__u64);
	/* Keep the verifier's bound on the size explicit. */
	asm volatile("" : "+r"(bytes));
	if (bytes > sizeof(e->stack))
		bytes = sizeof(e->stack);
	if (bytes == 0)
		return;
	if (bpf_probe_read_user(e->stack, bytes, (const void *)addr)) {
		e->flags |= HS_EVF_STACK_FAULT;
		count_lost(HS_LOST_STACK);
		return;
	}
	e->depth = n;
}

/* sample_alloc(ptr, requested, allocated, alignment, weight, stack, depth, seq)
 */
SEC("usdt")
int handle_sample_alloc(struct pt_regs *ctx)
{
	struct hs_event *e = event_start(HS_EV_ALLOC);
	__u32 bad = 0;

	if (!e)
		return 0;
	e->ptr = arg(ctx, 0, &bad);
	e->requested = arg(ctx, 1, &bad);
	e->allocated = arg(ctx, 2, &bad);
	e->alignment = arg(ctx, 3, &bad);
	e->weight = arg(ctx, 4, &bad);
	e->seq = arg(ctx, 7, &bad);
	e->alloc_seq = e->seq;
	read_stack(e, arg(ctx, 5, &bad), (__u32)arg(ctx, 6, &bad));
	if (bad)
		count_lost(HS_LOST_ARGS);
	submit(e);
	return 0;
}

/* sample_free(ptr, requested, allocated, alloc_seq, stack, depth, seq) */
SEC("usdt")
int handle_sample_free(struct pt_regs *ctx)
{
	struct hs_event *e = event_start(HS_EV_FREE);
	__u32 bad = 0;

	if (!e)
		return 0;
	e->ptr = arg(ctx, 0, &bad);
	e->requested = arg(ctx, 1, &bad);
	e->allocated = arg(ctx, 2, &bad);
	e->alloc_seq = arg(ctx, 3, &bad);
	e->seq = arg(ctx, 6, &bad);
	read_stack(e, arg(ctx, 4, &bad), (__u32)arg(ctx, 5, &bad));
	if (bad)
		count_lost(HS_LOST_ARGS);
	submit(e);
	return 0;
}

/* rate_change(new_period, old_period) */
SEC("usdt")
int handle_rate_change(struct pt_regs *ctx)
{
	struct hs_event *e = event_start(HS_EV_RATE);
	__u32 bad = 0;

	if (!e)
		return 0;
	e->new_period = (__s64)arg(ctx, 0, &bad);
	e->old_period = (__s64)arg(ctx, 1, &bad);
	if (bad)
		count_lost(HS_LOST_ARGS);
	submit(e);
	return 0;
}

/*
 * Compatible probes (abi.h, "Compatible probes"), provider otel_memory or
 * ddheap, whichever the collector attached: alloc(ptr, size, weight) and
 * free(ptr).  They carry no stack, so the user stack is walked here with
 * bpf_get_stack (frame pointers: complete only for code built with them).
 * Its first entry is the probe's own address, not a return address; +1
 * makes the collector's "return address - 1" symbolization land on it.
 */
static __always_inline void user_stack(struct hs_event *e, void *ctx)
{
	long n = bpf_get_stack(ctx, e->stack, sizeof(e->stack),
			       BPF_F_USER_STACK);

	if (n < 0) {
		e->flags |= HS_EVF_STACK_FAULT;
		count_lost(HS_LOST_STACK);
		return;
	}
	e->depth = (__u32)n / sizeof(__u64);
	if (e->depth > HS_EVENT_MAX_FRAMES)
		e->depth = HS_EVENT_MAX_FRAMES;
	if (e->depth)
		e->stack[0] += 1;
}

/* alloc(ptr, size, weight): size in bytes, weight = estimated bytes */
SEC("usdt")
int handle_compat_alloc(struct pt_regs *ctx)
{
	struct hs_event *e = event_start(HS_EV_ALLOC);
	__u32 bad = 0;

	if (!e)
		return 0;
	e->flags = HS_EVF_COMPAT;
	e->ptr = arg(ctx, 0, &bad);
	e->requested = arg(ctx, 1, &bad);
	e->allocated = e->requested;
	e->weight = arg(ctx, 2, &bad);
	user_stack(e, ctx);
	if (bad)
		count_lost(HS_LOST_ARGS);
	submit(e);
	return 0;
}

/* free(ptr) */
SEC("usdt")
int handle_compat_free(struct pt_regs *ctx)
{
	struct hs_event *e = event_start(HS_EV_FREE);
	__u32 bad = 0;

	if (!e)
		return 0;
	e->flags = HS_EVF_COMPAT;
	e->ptr = arg(ctx, 0, &bad);
	if (bad)
		count_lost(HS_LOST_ARGS);
	submit(e);
	return 0;
}

static __always_inline int tracked(__u32 tgid)
{
	return trace_all_exits || bpf_map_lookup_elem(&tracked_pids, &tgid);
}

/*
 * BTF-enabled raw tracepoints: no tracefs needed.  The exiting task's
 * signal->live has already been decremented when the tracepoint fires, so
 * 0 means the last thread of the group is leaving (the process is gone).
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct hs_event *e;

	if (!tracked(tgid))
		return 0;
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	e = event_start(HS_EV_EXIT);
	if (e) {
		e->pid = tgid; /* current may be a non-leader thread */
		submit(e);
	}
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct hs_event *e;

	if (!tracked(tgid))
		return 0;
	e = event_start(HS_EV_EXEC);
	if (e) {
		e->pid = tgid;
		submit(e);
	}
	return 0;
}

/*
 * The OOM killer chose task (memcg or global OOM): the daemon keeps the
 * victim's last heap snapshot (collector/daemon/oom_store.c).  Fires in
 * the killer's context (the task whose allocation failed, maybe another
 * process), so the victim's identity comes from task.
 */
SEC("tp_btf/mark_victim")
int BPF_PROG(handle_oom, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct hs_event *e;

	if (!tracked(tgid))
		return 0;
	e = event_start(HS_EV_OOM);
	if (e) {
		e->pid = tgid;
		e->tid = BPF_CORE_READ(task, pid);
		e->requested = BPF_CORE_READ(task, cred, uid.val);
		BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
		submit(e);
	}
	return 0;
}
