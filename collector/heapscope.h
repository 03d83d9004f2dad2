/* SPDX-License-Identifier: MIT */
/*
 * collector/heapscope.h - internal interfaces of the `heapscope` collector:
 * options, target discovery and attach (attach.c), ring-buffer events
 * (events.c), the target's registry (registry.c), the live set and its
 * aggregation (profile.c), symbols (symbolize.c, with the module map in
 * symbolize_maps.c and the cross-process cache in symbolize_cache.c),
 * folded output (export_folded.c).  Functions return 0 or -errno unless stated.
 * None of them is thread-safe: the collector is single-threaded.
 */
#ifndef HS_COLLECTOR_H
#define HS_COLLECTOR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "heapscope/abi.h"
#include "kinds.h"

/* ------------------------------------------------------------ options */

struct hs_options {
	pid_t pid;	     /* -p: target process (init pid namespace) */
	int duration_s;	     /* -d: seconds to record, 0 = until exit/signal */
	const char *output;  /* -o: folded output file, NULL = stdout */
	enum hs_value value; /* --value */
	const char *lib; /* --lib: path or file-name prefix of the library */
	bool verbose;	 /* -v: libbpf and debug messages on stderr */
	enum hs_format format; /* --format */
	enum hs_profile_kind profile; /* --profile */
	bool value_set;		      /* --value given */
	bool force; /* --force: -o may replace an existing file */
	enum hs_provider provider; /* --provider, default auto */
};

/* ------------------------------------------------------------ target */

#define HS_DEFAULT_LIB_PREFIX "libheapscope"

/* Probes found in an object's .note.stapsdt (hs_elf_probe_notes). */
#define HS_NOTE_HEAPSCOPE 0x01u	 /* heapscope:sample_alloc */
#define HS_NOTE_OTEL_ALLOC 0x02u /* otel_memory:alloc */
#define HS_NOTE_OTEL_FREE 0x04u	 /* otel_memory:free */
#define HS_NOTE_DD_ALLOC 0x08u	 /* ddheap:alloc */
#define HS_NOTE_DD_FREE 0x10u	 /* ddheap:free */

struct hs_target {
	pid_t pid;
	char path[PATH_MAX]; /* the object's path as the target sees it */
	char open_path[PATH_MAX + 64]; /* the same file, openable from here */
	uint64_t map_start; /* start of its mapping with file offset 0 */
	enum hs_provider provider; /* resolved: never AUTO after a find */
	unsigned notes;		   /* HS_NOTE_* of the object */
};

/*
 * Find the object providing the heapscope probes in /proc/PID/maps: the
 * first mapping whose file name starts with `match` (no '/'), or whose path
 * (or file name) equals `match` (contains '/'); match NULL means
 * HS_DEFAULT_LIB_PREFIX; failing that, a mapped file with a heapscope
 * stapsdt note.  -ESRCH: no such process; -ENOENT: not found.
 */
int hs_target__find(struct hs_target *t, pid_t pid, const char *match);
/* Does the ELF file at `path` carry a USDT note of provider "heapscope"? */
bool hs_elf_has_heapscope_note(const char *path);
/* HS_NOTE_* bits of the probes in the ELF file at `path` (0 if it cannot
 * be read or is not ELF).  Every note is bounds-checked: the file comes
 * from the target and is not trusted. */
unsigned hs_elf_probe_notes(const char *path);
/* Does an object with notes `notes` carry provider p's alloc probe
 * (heapscope: sample_alloc)?  And its free probe? */
bool hs_notes_have_alloc(unsigned notes, enum hs_provider p);
bool hs_notes_have_free(unsigned notes, enum hs_provider p);
/* The probes to attach to an object with these notes: p itself if the
 * object has p's alloc probe; for AUTO heapscope's, else otel_memory's,
 * else ddheap's.  AUTO = none. */
enum hs_provider hs_notes__choose(unsigned notes, enum hs_provider p);
/*
 * hs_target__find for provider p.  HEAPSCOPE: as hs_target__find.  OTEL,
 * DDHEAP: the first mapped object whose name matches `match` (when given)
 * or, without `match`, the first one, that carries p's alloc probe.  AUTO:
 * HEAPSCOPE, else OTEL, else DDHEAP.  Sets t->provider and t->notes.
 * -ESRCH: no such process; -ENOENT: no object with such probes.
 */
int hs_target__find_provider(struct hs_target *t, pid_t pid, const char *match,
			     enum hs_provider p);

/* ------------------------------------------------------------ registry */

/* Reads len bytes at addr of the target into dst: 0 or -errno. */
typedef int (*hs_mem_read_fn)(void *ctx, uint64_t addr, void *dst, size_t len);

#define HS_REGISTRY_MAX_CAPACITY (1ull << 22) /* slots */
#define HS_REGISTRY_MAX_RETRIES 16

struct hs_registry_snapshot {
	struct heapscope_registry hdr; /* validated header */
	struct heapscope_record *recs; /* live records, seq != 0 */
	size_t n;		       /* entries in recs */
	uint64_t invalid;	       /* records rejected by validation */
	unsigned retries;	       /* seqlock retries used */
	bool per_record;	       /* copied with per-record checks only */
};

/*
 * Copy the live records of the registry at `addr`, following the seqlock
 * protocol of abi.h, validating every field.  After HS_REGISTRY_MAX_RETRIES
 * unstable attempts, one last copy checks each record's seq before and
 * after (per_record = true; only valid while the probes are attached).
 * -EBADMSG: bad magic, version, sizes or bounds; -EAGAIN: no stable copy;
 * -ENOMEM; or the reader's error.
 */
int hs_registry__read(hs_mem_read_fn rd, void *rd_ctx, uint64_t addr,
		      struct hs_registry_snapshot *out);
void hs_registry__free(struct hs_registry_snapshot *s);
/* process_vm_readv reader; ctx points to a pid_t. */
int hs_registry__read_process(void *ctx, uint64_t addr, void *dst, size_t len);
/* Runtime address of `heapscope_registry` in target t (via .dynsym). */
int hs_registry__locate(const struct hs_target *t, uint64_t *addr);

/* ------------------------------------------------------------ profile */

/* Residency of one sample's OS pages (4 KiB), residency.c. */
struct hs_page_res {
	uint32_t pages;	  /* OS pages under [ptr, ptr + allocated) */
	uint32_t present; /* pagemap present (includes zero-page mappings) */
	uint32_t swapped; /* pagemap swapped */
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
		uint64_t start, bytes;	 /* span of the proxy */
		uint32_t live, objects;	 /* objects out of it / capacity */
		uint64_t updated_ns;	 /* when the target filled it, 0 = never */
	} pspan;
};

/* hs_sample.flags: from a compatible probe (otel_memory / ddheap): weight
 * is the estimated bytes itself (not units of r + 1), requested =
 * allocated = the probe's size, seq a record id made up by the collector. */
#define HS_SAMPLE_COMPAT 0x1u

struct hs_event;
/* Fill *s (all other fields zeroed) from a ring-buffer event or a registry
 * record whose depth the caller has already validated (<= 64 frames). */
void hs_sample__from_event(struct hs_sample *s, const struct hs_event *e);
void hs_sample__from_record(struct hs_sample *s,
			    const struct heapscope_record *r);

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
};

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

struct hs_profile;

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
double hs_sample_estimate(const struct hs_sample *s, enum hs_value v);
double hs_agg_value(const struct hs_stack_agg *a, enum hs_value v);

/* ------------------------------------------------------------ residency */

struct hs_residency;

/* Open /proc/PID/pagemap (and /proc/kpageflags if readable). */
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

/* ------------------------------------------------------------ window */

/* The allocs, lifetime and peak profiles of a recording (window.c). */
struct hs_window;

#define HS_FREE_MARKER ((uint64_t)-2) /* lifetime: free stack | alloc stack */
#define HS_LT_FREE_FRAMES 16	      /* free frames kept per lifetime stack */
#define HS_PEAK_RESOLUTION 0.01	      /* peak copy when total > last * 1.01 */

/* start_ns: CLOCK_MONOTONIC of the attach (window start). */
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
 * lifetime_mean|min|max/nanoseconds, same_thread_objects/count,
 * space/bytes, samples/count.  (pprof sums values when it merges
 * samples; mean/min/max are only right per sample.) */
struct hs_pprof_meta;
void hs_window__pprof_lifetime(struct hs_pprof_meta *m);
/* The aggregation of profile `kind` (malloc'd): heap and fragmentation
 * from the live set (residency must be scanned before, if wanted), the
 * others from the window w. */
int hs_record__aggregate(enum hs_profile_kind kind, struct hs_profile *live,
			 const struct hs_window *w, struct hs_stack_agg **out,
			 size_t *n);
/* Folded value when --value is not given: objects for lifetime,
 * fragmentation for fragmentation, inuse otherwise. */
enum hs_value hs_profile_kind__default_value(enum hs_profile_kind kind);
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
/* hs_symbolize_fn that names HS_FREE_MARKER "[free]"; ctx = hs_syms. */
const char *hs_window__sym(void *syms, uint64_t addr);

/* ------------------------------------------------------------ symbols */

struct hs_syms;

/* Snapshot /proc/PID/maps and open the mapped files (so they can be read
 * after the process exits or from another mount namespace). */
struct hs_syms *hs_syms__new(pid_t pid);
void hs_syms__free(struct hs_syms *s);
/* Refresh the maps snapshot if an address lies outside it and the
 * process is still alive. */
void hs_syms__check(struct hs_syms *s, const uint64_t *addrs, size_t n);
/* hs_stack_hint_fn: hs_syms__check of the struct hs_syms syms (NULL:
 * nothing). */
void hs_syms__hint(void *syms, const uint64_t *stack, size_t n);
/* Take the refresh that hs_syms__check deferred (rate limit), if the
 * process lives: _tick once the interval has passed, _sync now. */
void hs_syms__tick(struct hs_syms *s);
void hs_syms__sync(struct hs_syms *s);
/* How many times the maps snapshot was refreshed (diagnostics). */
unsigned hs_syms__refreshes(const struct hs_syms *s);

#define HS_BUILD_ID_MAX 64 /* bytes */

/* Everything known about one return address (pprof export).  Strings live
 * as long as s (until its next maps refresh for file/module). */
struct hs_frame {
	const char *function; /* as hs_syms__name */
	const char *file;     /* source file, NULL without debug info */
	int line;	      /* source line, 0 = unknown */
	const char *module;   /* mapped object path, NULL = unknown region */
	uint64_t mod_start, mod_end;		/* module address range */
	char build_id[2 * HS_BUILD_ID_MAX + 1]; /* hex, "" = none */
};

/* Symbolize addr (a return address) fully; -ENOENT: no module (f->function
 * is still set). */
int hs_syms__frame(struct hs_syms *s, uint64_t addr, struct hs_frame *f);
/* Name of the function containing return address `addr` (cached; the
 * string lives as long as s): "func", "module+0xoff" or "[unknown]". */
const char *hs_syms__name(void *s, uint64_t addr);

/* ------------------------------------------------------------ folded */

typedef const char *(*hs_symbolize_fn)(void *ctx, uint64_t addr);

struct hs_folded_line {
	char *stack; /* "root;...;leaf" */
	double value;
	uint64_t samples;
};

/* Symbolize and merge aggregated stacks into folded lines sorted by value
 * descending (ties by stack text). */
int hs_folded__build(const struct hs_stack_agg *aggs, size_t n, enum hs_value v,
		     hs_symbolize_fn sym, void *sym_ctx,
		     struct hs_folded_line **lines, size_t *nlines);
int hs_folded__write(FILE *f, const struct hs_folded_line *lines, size_t n);
/* Write to path atomically (hs_write_file_atomic); NULL or "-": stdout. */
int hs_folded__write_file(const char *path, const struct hs_folded_line *lines,
			  size_t n);
void hs_folded__free(struct hs_folded_line *lines, size_t n);

/* ------------------------------------------------------------ procinfo */

struct hs_proc_info {
	pid_t pid;	     /* host (init pid namespace) */
	pid_t nspid;	     /* innermost namespace's pid (= pid if none) */
	uint64_t start_time; /* clock ticks after boot (/proc/PID/stat #22) */
	char comm[16];
	char binary[PATH_MAX]; /* /proc/PID/exe, the target's view */
	char cgroup[256];      /* cgroup v2 path, "" if unknown */
};

/* -ESRCH: no such process; -EBADMSG: unparsable /proc data. */
int hs_proc__info(pid_t pid, struct hs_proc_info *pi);
int hs_proc__start_time(pid_t pid, uint64_t *start);
/* Read and check only the registry header of a live target. */
int hs_registry__read_header(pid_t pid, uint64_t addr,
			     struct heapscope_registry *h);

/* ------------------------------------------------------------ output */

/* Output files (record -o) may replace an existing path only when this is
 * true (default; `record` clears it unless --force).  Never follows a
 * symlink at path: the temporary file is linked or renamed over it.  Set
 * once, before any write (main thread). */
extern bool hs_output_force;
/* Could a profile be written to path (NULL or "-": stdout, always)?  Tries
 * a temporary file next to it, before anything is attached: 0, -EEXIST
 * (exists, not forced), -EINVAL (not a regular file or symlink: a device,
 * a FIFO), -ENAMETOOLONG or mkstemp's -errno. */
int hs_output__check(const char *path);
/* Write buf (len bytes) to path through a temporary file + fsync + rename
 * or link per hs_output_force (path NULL or "-": stdout, -EIO on a short
 * write).  0 or -errno; on an error path is unchanged. */
int hs_write_file_atomic(const char *path, const void *buf, size_t len);
/* Moves the finished temporary file tmp to path per hs_output_force:
 * 0, -EEXIST (path exists, not forced), -EINVAL (path is not a regular
 * file or symlink) or -errno.  tmp is gone after. */
int hs_install_output(const char *tmp, const char *path);

/* ------------------------------------------------------------ pprof */

/* What a pprof profile says besides its stacks (export_pprof.c). */
struct hs_pprof_meta {
	pid_t pid;	    /* host (init namespace) pid */
	pid_t nspid;	    /* pid inside the process's own namespace */
	const char *comm;   /* label, may be NULL */
	const char *cgroup; /* cgroup v2 path, label, may be NULL */
	int64_t period;	    /* sampling period T, bytes (<= 0: unknown) */
	int64_t time_nanos; /* wall clock of the profile, ns since epoch */
	int64_t duration_nanos;
	const char *const *comments; /* notes: lost events, sampling cost */
	size_t ncomments;
	bool allocs; /* alloc_* (window) instead of inuse_* sample types */
	bool residency; /* add resident_space, swapped_space,
			 * not_resident_space, huge_space (bytes) */
	/* Other sample types instead of the heap/allocs ones (lifetime,
	 * fragmentation): ntypes names/units; values(agg, vals[ntypes]). */
	size_t ntypes;
	const char *const *type_names, *const *type_units;
	void (*values)(const struct hs_stack_agg *a, int64_t *vals);
};

/*
 * Encode aggregated stacks as a gzip'd pprof profile: sample types
 * [inuse|alloc]_objects/count, [inuse|alloc]_space/bytes,
 * [inuse|alloc]_requested_space/bytes, samples/count; *out is malloc'd.
 * syms may be NULL (every frame "[unknown]").
 */
int hs_pprof__build(const struct hs_stack_agg *aggs, size_t n,
		    struct hs_syms *syms, const struct hs_pprof_meta *m,
		    uint8_t **out, size_t *len);

/* Short top list ("flat" per leaf function and the heaviest stacks) of
 * folded lines; total is the profile's total value. */
int hs_text__write(FILE *f, const struct hs_folded_line *lines, size_t n,
		   enum hs_value v);

/* ------------------------------------------------------------ render */

/* What hs_render turns into bytes. */
struct hs_render {
	/* aggregated stacks: pprof, and folded / text when lines is NULL */
	const struct hs_stack_agg *aggs;
	size_t naggs;
	/* folded / text: the folded lines if the caller has them already
	 * (NULL: built from aggs with value and syms) */
	const struct hs_folded_line *lines;
	size_t nlines;
	enum hs_value value;	/* folded / text value */
	struct hs_syms *syms;	/* may be NULL: frames "[unknown]" */
	const struct hs_pprof_meta *meta; /* types, labels, notes */
	bool text_notes; /* text: meta's comments first, as "# " lines */
};

/*
 * Render r as fmt: a gzip'd pprof profile (hs_pprof__build), folded text
 * (hs_folded__write) or the text top list (hs_text__write).  *out is
 * malloc'd (*len bytes).  0 or -errno (-ENOMEM).  Symbolizes through
 * r->syms: the caller holds whatever protects it.
 */
int hs_render(const struct hs_render *r, enum hs_format fmt, uint8_t **out,
	      size_t *len);

struct hs_report_stats {
	pid_t pid, nspid;
	const char *binary;
	uint64_t live, lost_ringbuf, seq_lost, lost_stack;
	uint64_t lost_ringbuf_proc; /* ring-buffer drops of this process */
	int64_t period;
	uint64_t sampled_bytes, records; /* from the registry header */
	uint64_t cached_bytes; /* header: freed sampled pages kept for reuse */
	/* compatible probes (provider OTEL / DDHEAP; AUTO = HEAPSCOPE): no
	 * registry, so the comments say what the profile cannot hold */
	enum hs_provider provider;
	bool compat_no_free;	   /* the object has no free probe */
	uint64_t compat_unmatched; /* frees of allocations before the attach */
};

/* Fill up to max (>= 3; 4 for every note) comment lines; returns how
 * many. */
int hs_report__comments(char out[][160], size_t max,
			const struct hs_report_stats *st);

/* ------------------------------------------------------------ commands */

/* `heapscope daemon ...` (daemon.c) and `heapscope rate ...` (rate.c);
 * argv[0] is the subcommand.  Return the process exit status. */
int hs_daemon_main(int argc, char **argv);
int hs_rate_main(int argc, char **argv);

/* ------------------------------------------------------------ events */

/* A maps-refresh hint: stack[0..n) of a sample joining the live set
 * (hs_syms__hint for a struct hs_syms). */
typedef void (*hs_stack_hint_fn)(void *ctx, const uint64_t *stack, size_t n);

struct hs_events {
	struct hs_profile *prof;
	hs_stack_hint_fn hint; /* may be NULL */
	void *hint_ctx;
	pid_t pid;
	bool verbose;
	bool exited; /* exit event seen */
	bool execed; /* exec event seen */
	uint64_t allocs, frees, rates;
	uint64_t bad;	       /* malformed events */
	uint64_t stack_faults; /* events whose stack could not be read */
	int64_t period;	       /* last rate_change new period, 0 = unknown */
	/* compatible probes (HS_EVF_COMPAT events) */
	uint64_t compat_unmatched; /* frees of pointers not live here:
				    * allocated before the attach */
	uint64_t compat_replaced;  /* allocs at a live pointer (its free
				    * was lost): the old sample dropped */
	struct hs_window *win; /* allocs/lifetime/peak, may be NULL */
};

/* Is data (size bytes from the ring buffer) a struct hs_event of this
 * build: size, magic, version, its own size field, depth <= 64 frames?
 * Nothing else of it is trusted yet.  Thread-safe. */
bool hs_event__valid(const void *data, size_t size);
/* ring_buffer_sample_fn: validates and applies one struct hs_event. */
int hs_events__handle(void *ctx, void *data, size_t size);

/* What hs_events__load_registry read. */
struct hs_registry_load {
	uint64_t addr;	  /* the registry's address, 0 = not located */
	size_t records;	  /* live records read */
	size_t added;	  /* of them, new to the live set */
	uint64_t invalid; /* records rejected by validation */
	unsigned retries; /* seqlock retries used */
	bool per_record;  /* copied with per-record checks only */
	int64_t period;	  /* the header's sample_period, bytes */
};

/*
 * Samples taken before the attach join the live set: locate the registry
 * in t's object (heapscope's), copy it out of process t->pid
 * (hs_registry__read) and add every record to ev->prof, and to ev->win as
 * a live alloc when new, hinting each stack; ev->period is set from the
 * header if still 0.  Attach the probes first: what changes during the
 * read then arrives as events too.  0, or the error of
 * hs_registry__locate (out->addr = 0) or of hs_registry__read.
 */
int hs_events__load_registry(struct hs_events *ev, const struct hs_target *t,
			     struct hs_registry_load *out);

#endif /* HS_COLLECTOR_H */
