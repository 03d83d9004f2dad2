/* SPDX-License-Identifier: MIT */
/*
 * profiles.h - collector/profiles/: the samples and what is computed from
 * them.  A sample (struct hs_sample) joins the live set (profile.c), which
 * aggregates per distinct stack (stack_table.c) into the heap profile; the
 * window of a recording keeps the allocs, lifetime and peak profiles
 * (window.c); fragmentation.c attributes the bytes of proxies' spans;
 * residency.c reads what the kernel did with each sample's pages; rss.c
 * splits a process's RSS by where the allocator says it went; leaks.c
 * keeps each stack's in-use estimate over time and leak_stats.c fits and
 * ranks those series (the leak-trend view).
 * Estimates follow DESIGN.md section 1: a sample of requested size r,
 * allocated size a and weight W stands for W/(r+1) objects and a*W/(r+1)
 * bytes.  Functions return 0 or -errno unless stated; none is thread-safe.
 */
#ifndef HS_PROFILES_H
#define HS_PROFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapscope/abi.h"
#include "kinds.h"

/* ------------------------------------------------------------ types */

/* Residency of one sample's OS pages (4 KiB), residency.c. */
struct hs_page_res {
	uint32_t pages;	    /* OS pages under [ptr, ptr + allocated) */
	uint32_t present;   /* pagemap present (includes zero-page mappings) */
	uint32_t swapped;   /* pagemap swapped */
	uint32_t exclusive; /* present and mapped by this process only */
	/* from /proc/kpageflags, present pages with a PFN only: */
	uint32_t zero, huge, compound_head, compound_tail;
	uint32_t dirty, referenced, active, ksm;
	uint8_t valid;	     /* scanned */
	uint8_t flags_known; /* kpageflags read (root) */
};

struct hs_sample {
	uint64_t seq; /* record id */
	uint64_t ptr;
	uint64_t requested; /* r, bytes */
	uint64_t allocated; /* a, bytes */
	uint64_t weight;    /* W, bytes */
	uint32_t tid;
	uint32_t depth;			      /* <= HEAPSCOPE_MAX_FRAMES */
	uint64_t stack[HEAPSCOPE_MAX_FRAMES]; /* innermost first */
	uint64_t time_ns;	/* CLOCK_MONOTONIC of the allocation, 0 = ? */
	uint32_t flags;		/* HS_SAMPLE_* */
	struct hs_page_res res; /* filled by hs_residency__scan */
	/* small samples: the proxy and its span (record extension, abi.h) */
	uint64_t proxy;
	struct {
		uint64_t start, bytes;	/* span of the proxy */
		uint32_t live, objects; /* objects out of it / capacity */
		uint64_t updated_ns; /* when the target filled it, 0 = never */
	} pspan;
};

/* hs_sample.flags: from a compatible probe (otel_memory / ddheap): weight
 * is the estimated bytes itself (not units of r + 1), requested =
 * allocated = the probe's size, seq a record id made up by the collector. */
#define HS_SAMPLE_COMPAT 0x1u
/* Record ids the collector makes up for such samples start here; the
 * library's own seqs count up from 1 and never get there. */
#define HS_COMPAT_SEQ_BASE (1ull << 63)

/* One distinct raw stack with its summed estimates. */
struct hs_stack_agg {
	uint32_t depth;
	uint64_t stack[HEAPSCOPE_MAX_FRAMES];
	uint64_t samples; /* live samples */
	double inuse;	  /* bytes */
	double requested; /* bytes */
	double objects;	  /* count */
	/* residency estimates, bytes (0 unless the samples were scanned) */
	double resident, swapped, not_resident, huge;
	uint64_t res_samples; /* samples with residency */
	/* lifetime profile: ns; mean = lt_sum / lt_weight */
	double lt_min, lt_max, lt_sum, lt_weight;
	double same_thread; /* estimated objects freed by the allocating tid */
	/* fragmentation profile, bytes */
	double frag, frag_age;
	/* allocations since the daemon followed the process (estimates)
	 * and their samples: hs_alloc_totals__add */
	double alloc_space, alloc_objects;
	uint64_t alloc_samples;
};

/* ----------------------------------------------------- "stack_table.c" */

/*
 * A table of distinct stacks (stack_table.c): aggs[0..n) in the order the
 * stacks were first added.  Zero-initialise it ({0}); not thread-safe.
 */
struct hs_stack_table {
	struct hs_stack_agg *aggs;
	size_t n, cap; /* entries used, allocated */
	size_t *index; /* icap slots: aggs index + 1, 0 = empty */
	size_t icap;   /* power of two, 2 * cap */
};

/* Room for need entries without another allocation: 0 or -ENOMEM. */
int hs_stack_table__reserve(struct hs_stack_table *t, size_t need);
/* The entry of stack[0..depth), added zeroed (but for depth and stack) if
 * new; NULL on ENOMEM or depth > HEAPSCOPE_MAX_FRAMES.  Pointers into the
 * table last until the next addition. */
struct hs_stack_agg *hs_stack_table__get(struct hs_stack_table *t,
					 const uint64_t *stack, uint32_t depth);
/* The entry of that stack, or NULL if the table has none. */
struct hs_stack_agg *hs_stack_table__find(const struct hs_stack_table *t,
					  const uint64_t *stack,
					  uint32_t depth);
/* A malloc'd copy of the entries (never NULL on success): 0 or -ENOMEM. */
int hs_stack_table__copy(const struct hs_stack_table *t,
			 struct hs_stack_agg **out, size_t *n);
/* Hand the entries' array to the caller (malloc'd, never NULL on success)
 * and empty the table: 0 or -ENOMEM (the table is freed either way). */
int hs_stack_table__take(struct hs_stack_table *t, struct hs_stack_agg **out,
			 size_t *n);
void hs_stack_table__free(struct hs_stack_table *t);
/*
 * after - before, per stack, of the heap values (samples, inuse,
 * requested, objects, alloc_space, alloc_objects, alloc_samples): the
 * delta profile of Go's ?seconds=N.  Stacks only in `before` come out
 * negative (samples counts wrap: read them as int64).  *out malloc'd
 * (never NULL on success): 0 or -ENOMEM.
 */
int hs_stack_table__delta(const struct hs_stack_agg *before, size_t nb,
			  const struct hs_stack_agg *after, size_t na,
			  struct hs_stack_agg **out, size_t *n);

/* --------------------------------------------------------- "profile.c" */

struct hs_profile;

/* An empty live set, NULL on ENOMEM; freed (with its samples) by
 * hs_profile__free (NULL is a no-op). */
struct hs_profile *hs_profile__new(void);
void hs_profile__free(struct hs_profile *p);
/* A sampled allocation (registry record or event).  Returns 0 when added,
 * 1 when it was already live (duplicate) or already freed (tombstone). */
int hs_profile__alloc(struct hs_profile *p, const struct hs_sample *s);
/* A free of record alloc_seq.  0 when a live sample was removed, 1 when
 * the alloc was not seen yet (a tombstone is kept). */
int hs_profile__free_seq(struct hs_profile *p, uint64_t alloc_seq);
/* The live sample of record seq, or NULL. */
const struct hs_sample *hs_profile__get(const struct hs_profile *p,
					uint64_t seq);
/* Record the seq of an alloc/free event, for gap detection. */
void hs_profile__note_seq(struct hs_profile *p, uint64_t seq);
/* Events missing from the seq range seen so far. */
uint64_t hs_profile__seq_lost(const struct hs_profile *p);
size_t hs_profile__live(const struct hs_profile *p);
/* Forget every sample and tombstone (exec). */
void hs_profile__reset(struct hs_profile *p);
/*
 * Samples of compatible probes have no record id: they are keyed by
 * pointer.  hs_profile__alloc_ptr gives s (HS_SAMPLE_COMPAT, ptr != 0) a
 * made-up record id (stored in s->seq, from 2^63 up) and indexes its
 * pointer; 0, or -EEXIST if the pointer is live already (the caller frees
 * it first: an address cannot be live twice), -EINVAL, -ENOMEM.
 * hs_profile__ptr_seq: the record id of the live sample at ptr, 0 = none.
 * hs_profile__free_seq of such a record drops its pointer too.
 */
int hs_profile__alloc_ptr(struct hs_profile *p, struct hs_sample *s);
uint64_t hs_profile__ptr_seq(const struct hs_profile *p, uint64_t ptr);
/* Visit live samples. */
void hs_profile__for_each(const struct hs_profile *p,
			  void (*fn)(void *ctx, const struct hs_sample *s),
			  void *ctx);
/* Live samples as an array of pointers into the profile (valid until the
 * next change of p); *out is malloc'd.  For residency scans. */
int hs_profile__samples(struct hs_profile *p, struct hs_sample ***out,
			size_t *n);
/* Sum live samples per distinct stack; *out is malloc'd. */
int hs_profile__aggregate(const struct hs_profile *p, struct hs_stack_agg **out,
			  size_t *n);
/* Sum live samples per distinct stack into t (which may hold entries
 * already: their sums grow).  0 or -ENOMEM. */
int hs_profile__aggregate_into(const struct hs_profile *p,
			       struct hs_stack_table *t);
/*
 * Count sample s (a new allocation) in the totals t: its stack's
 * alloc_samples, alloc_space (estimated bytes a*W/(r+1)) and
 * alloc_objects (W/(r+1)) grow.  0 or -ENOMEM.  Not thread-safe.
 */
int hs_alloc_totals__add(struct hs_stack_table *t, const struct hs_sample *s);
/*
 * The heap profile with allocation totals, as Go's: the live samples of p
 * summed per stack, and for each stack of totals its alloc_* sums (stacks
 * with nothing live left have inuse 0).  *out malloc'd: 0 or -ENOMEM.
 */
int hs_profile__aggregate_heap(const struct hs_profile *p,
			       const struct hs_stack_table *totals,
			       struct hs_stack_agg **out, size_t *n);
double hs_sample_estimate(const struct hs_sample *s, enum hs_value v);
double hs_agg_value(const struct hs_stack_agg *a, enum hs_value v);

/* ------------------------------------------------------- "residency.c" */

struct hs_residency;

/* Open /proc/PID/pagemap (and /proc/kpageflags if readable): 0 or the
 * open's -errno (-ENOENT: no such process).  Closed by
 * hs_residency__close (NULL is a no-op). */
int hs_residency__open(struct hs_residency **out, pid_t pid);
void hs_residency__close(struct hs_residency *r);
/*
 * Fill ss[i]->res for n samples: pagemap entries for each sample's OS pages
 * (batched: nearby samples share one pread), kpageflags for present PFNs
 * (sorted, batched).  Samples with impossible addresses get res.valid = 0.
 * -errno on a read error (e.g. -ESRCH/-ENOENT: the process is gone).
 */
int hs_residency__scan(struct hs_residency *r, struct hs_sample *const *ss,
		       size_t n);
/* Fraction (0..1) of the sample's pages in state v (HS_VALUE_RESIDENT,
 * _SWAPPED, _NOT_RESIDENT, _HUGE); 0 when not scanned. */
double hs_res_fraction(const struct hs_page_res *res, enum hs_value v);
/* Scan every live sample of p in process pid: 0 or -errno. */
int hs_profile__scan_residency(struct hs_profile *p, pid_t pid);

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
	uint64_t kpf_pages; /* present pages whose flags were read */
	uint64_t kpf_reads, kpf_entries; /* preads, entries incl. gaps */
};
void hs_residency__stats(const struct hs_residency *r,
			 struct hs_residency_stats *st);

/* ---------------------------------------------------------- "window.c" */

/* The allocs, lifetime and peak profiles of a recording (window.c). */
struct hs_window;

#define HS_FREE_MARKER ((uint64_t)-2) /* lifetime: free stack | alloc stack */
#define HS_LT_FREE_FRAMES 16	      /* free frames kept per lifetime stack */
#define HS_PEAK_RESOLUTION 0.01	      /* peak copy when total > last * 1.01 */

/* start_ns: CLOCK_MONOTONIC of the attach (window start).  NULL on
 * ENOMEM; hs_window__free(NULL) is a no-op. */
struct hs_window *hs_window__new(uint64_t start_ns);
void hs_window__free(struct hs_window *w);
/* While on, live allocs do not check for a new peak (registry load). */
void hs_window__loading(struct hs_window *w, bool on);
/* A sample_alloc event (allocs profile). */
int hs_window__alloc_event(struct hs_window *w, const struct hs_sample *s);
/* A sample joined the live set (after hs_profile__alloc returned 0). */
int hs_window__live_alloc(struct hs_window *w, const struct hs_sample *s,
			  const struct hs_profile *live);
/* A live sample is about to leave the live set (free event at free_ns,
 * thread free_tid, free stack fstack[fdepth], innermost first). */
int hs_window__live_free(struct hs_window *w, const struct hs_sample *s,
			 uint64_t free_ns, uint32_t free_tid,
			 const uint64_t *fstack, uint32_t fdepth);
/* Take a peak copy if the total exceeds the last by the resolution. */
int hs_window__peak_check(struct hs_window *w, const struct hs_profile *live);
/* Copies (malloc'd) of the aggregations. */
int hs_window__allocs(const struct hs_window *w, struct hs_stack_agg **out,
		      size_t *n);
int hs_window__lifetime(const struct hs_window *w, struct hs_stack_agg **out,
			size_t *n);
int hs_window__peak(const struct hs_window *w, struct hs_stack_agg **out,
		    size_t *n, double *total);
uint64_t hs_window__peak_snapshots(const struct hs_window *w);
/* pprof sample types of the lifetime profile: objects/count,
 * lifetime/nanoseconds (the objects' summed lifetimes, Σ c·t: mean =
 * lifetime / objects), lifetime_min|max/nanoseconds (per stack),
 * same_thread_objects/count, space/bytes, samples/count.  (pprof sums
 * values when it merges samples: min and max are only right per stack.) */
struct hs_pprof_meta;
void hs_window__pprof_lifetime(struct hs_pprof_meta *m);
/* The aggregation of profile `kind` (malloc'd): heap and fragmentation
 * from the live set (residency must be scanned before, if wanted), the
 * others from the window w. */
int hs_profiles__aggregate(enum hs_profile_kind kind, struct hs_profile *live,
			   const struct hs_window *w, struct hs_stack_agg **out,
			   size_t *n);

/* hs_symbolize_fn that names HS_FREE_MARKER "[free]"; ctx = hs_syms. */
const char *hs_window__sym(void *syms, uint64_t addr);

/* --------------------------------------------------- "fragmentation.c" */

/* Fragmentation profile of the live set (fragmentation.c). */
int hs_fragmentation__aggregate(struct hs_profile *live,
				struct hs_stack_agg **out, size_t *n);
/* Read the target's record extension (abi.h) for every live sample of p
 * (registry at reg_addr): proxy span data.  -ENOTSUP: the library has no
 * extension; -EBADMSG: implausible header. */
int hs_fragmentation__read(struct hs_profile *p, pid_t pid, uint64_t reg_addr);
/* pprof sample types of the fragmentation profile. */
void hs_fragmentation__pprof(struct hs_pprof_meta *m);
/* Coverage of the fragmentation profile over the live set of p: samples
 * with usable proxy span data (covered) and without (samples larger than
 * the target's HEAPSCOPE_PROXY_MAX, large allocations, or stale data),
 * and their estimated bytes (inuse_space).  Any output may be NULL. */
void hs_fragmentation__coverage(struct hs_profile *p, uint64_t *covered,
				uint64_t *not_covered, double *covered_bytes,
				double *not_covered_bytes);

/* ------------------------------------------------------------- "rss.c" */

/* The parts of a process's RSS (docs/profiles.md, "Where RSS went"), in
 * the order of hs_rss_part_names. */
enum hs_rss_part {
	HS_RSS_HEAP_IN_USE,	    /* objects handed to the program */
	HS_RSS_HEAP_FREE_COMMITTED, /* page heap, region cache, span tails,
				     * central/transfer lists */
	HS_RSS_THREAD_CACHES,	    /* the threads' caches */
	HS_RSS_ALLOCATOR_METADATA,  /* spans, pagemap, caches' own memory */
	HS_RSS_SAMPLING_COST,	    /* sampled pages, registry, unwind cache */
	HS_RSS_OTHER_ANONYMOUS,	    /* anonymous RSS not the allocator's */
	HS_RSS_FILE_BACKED,	    /* file and shared-memory pages */
	HS_RSS_NPARTS
};
extern const char *const hs_rss_part_names[HS_RSS_NPARTS];

/* One process's RSS table.  Bytes. */
struct hs_rss_table {
	pid_t pid;
	uint64_t rss_bytes;  /* smaps_rollup Rss */
	uint64_t anon_bytes; /* smaps_rollup Anonymous */
	uint64_t parts[HS_RSS_NPARTS];
	uint64_t parts_sum;	     /* sum of parts */
	uint64_t inuse_estimate;     /* the heap profile's estimate (sampled) */
	uint64_t anon_outside_bytes; /* anonymous pages certainly not the
				      * allocator's (stack, brk, other
				      * files' copy-on-write pages) */
	uint64_t unresident_bytes;   /* allocator figures above anonymous RSS
				      * (committed, not resident), taken off
				      * free, metadata, sampling cost */
	/* the figures the parts are made of */
	uint64_t thread_cache_bytes, central_free_bytes, pageheap_free_bytes,
		region_cached_bytes, span_waste_bytes, large_bytes,
		sampled_pages_bytes, registry_bytes, unwind_cache_bytes,
		metadata_reserved_bytes, live_samples, thread_caches_walked;
	/* heap_in_use as the allocator counts it: every byte handed out,
	 * resident or not (the part heap_in_use counts a large block's
	 * resident pages only) */
	uint64_t heap_in_use_allocated;
	uint64_t large_resident_bytes; /* of large_bytes, resident */
	uint64_t large_span_resident;  /* of that, page-heap spans' */
	uint64_t large_swapped_bytes;  /* large blocks' pages swapped out */
	int heap_map_error;	       /* 0: large blocks measured; else why not
					* (-ENOENT: a version-1 library) */
	bool consistent;       /* the counters came from two agreeing copies */
	bool sampled_measured; /* sampling_cost's pages measured resident */
	bool large_measured;   /* large_resident_bytes measured (pagemap) */
};

/*
 * Compute t's parts from a statistics snapshot s and the kernel's
 * figures (rss, anon: bytes); alloc_limit: the anonymous bytes the
 * allocator could own (unnamed anonymous mappings and its object's own,
 * from smaps), the most its parts may take.  sampled_resident: resident bytes
 * of the pages of live samples that have a proxy (measured through pagemap), or
 * -1 when unknown (the counter is used).  large_resident: resident bytes
 * of the in-use large blocks (heap map and pagemap), or -1 when unknown
 * (the part heap_in_use then counts them whole).  Pure; the formulas are
 * docs/profiles.md's.
 */
struct hs_stats_snapshot;
void hs_rss__compute(const struct hs_stats_snapshot *s, uint64_t rss,
		     uint64_t anon, uint64_t alloc_limit,
		     int64_t sampled_resident, int64_t large_resident,
		     struct hs_rss_table *t);

/*
 * Read the RSS table of process pid, whose allocator is the object that
 * hs_target__find(pid, lib) finds (lib NULL: libheapscope): the
 * statistics block through /proc/PID/mem, then /proc/PID/smaps_rollup.
 * -ESRCH: no such process (or it exited while read); -ENOENT: it maps no
 * libheapscope; -EPROTONOSUPPORT: its library has no statistics block
 * (older than it); -EBADMSG: the block fails validation; -EACCES,
 * -EPERM: not allowed to read it.  Thread-safe.
 */
int hs_rss_table_read(pid_t pid, const char *lib, struct hs_rss_table *t);
/* The same for a target already found (the daemon's). */
struct hs_target;
int hs_rss_table_read_target(const struct hs_target *tg,
			     struct hs_rss_table *t);

/* ------------------------------------------------------ "leak_stats.c" */

/* docs/profiles.md, "Leak trends": a site grows when its growth t is at
 * least HS_LEAK_T_MIN over at least HS_LEAK_FIT_MIN_POINTS points and
 * its oldest live object is at least HS_LEAK_AGE_MIN of the span old. */
#define HS_LEAK_T_MIN 3.0
#define HS_LEAK_AGE_MIN 0.5
#define HS_LEAK_FIT_MIN_POINTS 3
#define HS_LEAK_T_CAP 1e6 /* |t| reported at most (se 0: exact data) */

/* A least-squares line through a series of in-use estimates. */
struct hs_leak_fit {
	size_t points;
	double span_s;	    /* last time - first, seconds */
	double slope;	    /* bytes per second (ordinary least squares) */
	double se_sampling; /* its standard error from the points' sampling
			     * variances (sum c_i^2 var_i), bytes/s */
	double se_residual; /* from the residuals (RSS/(n-2)/Sxx), bytes/s */
	double se;	    /* sqrt(se_sampling^2 + se_residual^2) */
	double t;	    /* slope / se, within +-HS_LEAK_T_CAP */
};

/*
 * The sampling variance (bytes^2) of sample s's in-use estimate
 * a*W/(r+1) under a geometric sampler of period `period` bytes: w (w - k)
 * with k = r + 1, w = k / (1 - exp(-k/P)) (Horvitz-Thompson), scaled to
 * bytes by a/k; about P^2 for blocks much smaller than P, 0 for blocks
 * much larger.  Compatible samples or period <= 0: x (x - a) from the
 * estimate x itself.
 */
double hs_leak__sample_var(const struct hs_sample *s, int64_t period);
/* Fit y (bytes) over t (seconds, increasing), var (bytes^2, each point's
 * sampling variance) of n points into *f (zeroed but for points and span
 * when n < 2 or the times do not differ).  Returns 0. */
int hs_leak__fit(const double *t, const double *y, const double *var,
		 size_t n, struct hs_leak_fit *f);
/* The rank of a site: max(t, 0) * min(1, oldest_age_s / span), 0 with
 * fewer than HS_LEAK_FIT_MIN_POINTS points. */
double hs_leak__score(const struct hs_leak_fit *f, double oldest_age_s);
/* Is the site growing (see HS_LEAK_T_MIN)? */
bool hs_leak__growing(const struct hs_leak_fit *f, double oldest_age_s);

/* ----------------------------------------------------------- "leaks.c" */

#define HS_LEAK_POINTS 720	/* points per stack: 1 h at 5 s */
#define HS_LEAK_MAX_STACKS 64	/* stacks tracked per process */
#define HS_LEAK_INTERVAL_S 5	/* the daemon's default interval */
/* The most a store holds, bytes: its timeline and slots, and a ring of
 * two floats a point for each tracked stack (~410 KiB). */
#define HS_LEAK_BYTES_MAX                                                   \
	(sizeof(uint64_t) * (HS_LEAK_POINTS + 8) +                            \
	 HS_LEAK_MAX_STACKS * (sizeof(uint64_t) * (HEAPSCOPE_MAX_FRAMES + 6) + \
			       2 * sizeof(float) * HS_LEAK_POINTS))

/* A process's leak-trend store (leaks.c). */
struct hs_leaks;

/* A store taking a point every interval_ns (CLOCK_MONOTONIC); NULL on
 * ENOMEM.  hs_leaks__free(NULL) is a no-op. */
struct hs_leaks *hs_leaks__new(uint64_t interval_ns);
void hs_leaks__free(struct hs_leaks *l);
/* Take a point of every tracked stack from the live set at now_ns (new
 * stacks admitted as leaks.c says), the sampling variances for period
 * (bytes, <= 0 unknown): one pass over the live set.  0 or -ENOMEM (no
 * point taken). */
int hs_leaks__point(struct hs_leaks *l, const struct hs_profile *live,
		    int64_t period, uint64_t now_ns);
/* hs_leaks__point if the interval has passed since the last point (or
 * none was taken yet), else 0 at once. */
int hs_leaks__tick(struct hs_leaks *l, const struct hs_profile *live,
		   int64_t period, uint64_t now_ns);
uint64_t hs_leaks__points(const struct hs_leaks *l); /* points ever taken */
size_t hs_leaks__bytes(const struct hs_leaks *l);    /* memory held now */
/* Seconds from the first point held to the last (0 with fewer than 2). */
double hs_leaks__window_s(const struct hs_leaks *l);

/* One tracked stack's series, copied out of a store. */
struct hs_leak_series {
	uint32_t depth;
	uint64_t stack[HEAPSCOPE_MAX_FRAMES]; /* innermost first */
	size_t n;	 /* points */
	double *t_s;	 /* seconds since the store's first point held; one
			  * malloc'd block with inuse and var */
	double *inuse;	 /* bytes */
	double *var;	 /* bytes^2, at least P^2 */
	/* from the live set at copy time */
	double inuse_now;     /* bytes */
	uint64_t samples;     /* live samples */
	double oldest_age_s;  /* age of the oldest live sample, 0 = none */
	double mean_age_s;    /* mean age, weighted by estimated bytes */
};

/* Copy the series of l, with the ages and in-use bytes of live at now_ns
 * (CLOCK_MONOTONIC): *out malloc'd (never NULL on success), free with
 * hs_leak_series__free.  0 or -ENOMEM. */
int hs_leaks__copy(const struct hs_leaks *l, const struct hs_profile *live,
		   uint64_t now_ns, struct hs_leak_series **out, size_t *n);
void hs_leak_series__free(struct hs_leak_series *s, size_t n);

#endif /* HS_PROFILES_H */
