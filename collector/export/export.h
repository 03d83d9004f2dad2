/* SPDX-License-Identifier: MIT */
/*
 * export.h - collector/export/: aggregated stacks out as bytes: folded
 * stacks, gzip'd pprof, a text top list, the RSS table as JSON and
 * Prometheus text (export_rss.c) (one render for every front-end,
 * render.c), with the notes every profile carries, and written to a file
 * atomically (output.c); the leak-trend view as JSON (export_leaks.c);
 * JSON strings (json.c).  Functions return 0 or -errno unless stated;
 * none is thread-safe unless stated.
 */
#ifndef HS_EXPORT_H
#define HS_EXPORT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "kinds.h"
#include "profiles.h"
#include "symbolize.h"

/* --------------------------------------------------- "export_folded.c" */

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
/* Put frame (its ';' and newlines made '_') before every line's stack,
 * as its root: "frame;root;...;leaf".  -ENOMEM leaves the lines valid. */
int hs_folded__prefix(struct hs_folded_line *lines, size_t n, const char *frame);
/* Sort lines as hs_folded__build does: value descending, ties by text. */
void hs_folded__sort(struct hs_folded_line *lines, size_t n);
int hs_folded__write(FILE *f, const struct hs_folded_line *lines, size_t n);
/* Write to path atomically (hs_write_file_atomic); NULL or "-": stdout. */
int hs_folded__write_file(const char *path, const struct hs_folded_line *lines,
			  size_t n);
/* The folded text of one stack[0..depth) (innermost first): frames
 * outermost first joined by ';', ';' and newlines in names as '_',
 * "[unknown]" for unnamed frames, "[no stack]" for depth 0.  malloc'd;
 * NULL on ENOMEM. */
char *hs_folded__stack_text(const uint64_t *stack, uint32_t depth,
			    hs_symbolize_fn sym, void *ctx);
/* Free n lines from hs_folded__build (NULL is a no-op). */
void hs_folded__free(struct hs_folded_line *lines, size_t n);

/* ---------------------------------------------------- "export_pprof.c" */

/* What a pprof profile says besides its stacks (export_pprof.c). */
struct hs_pprof_meta {
	pid_t pid;	    /* host (init namespace) pid */
	pid_t nspid;	    /* pid inside the process's own namespace */
	/* labels of every sample (NULL or "": none; /targets uses the same
	 * names): comm, exe (/proc/PID/exe), cgroup (v2 path), container_id,
	 * systemd_unit (hs_proc__cgroup_ids) */
	const char *comm, *exe, *cgroup, *container_id, *unit;
	int64_t period;	    /* sampling period T, bytes (<= 0: unknown) */
	int64_t time_nanos; /* wall clock of the profile, ns since epoch */
	int64_t duration_nanos;
	const char *const *comments; /* notes: lost events, sampling cost */
	size_t ncomments;
	bool allocs; /* alloc_* (window) instead of inuse_* sample types */
	/* Go's heap types instead: alloc_objects, alloc_space,
	 * inuse_objects, inuse_space (then inuse_requested_space, samples);
	 * the default alloc_space if allocs, else inuse_space */
	bool go_types;
	bool residency; /* add resident_space, swapped_space,
			 * not_resident_space, huge_space (bytes) */
	/* Other sample types instead of the heap/allocs ones (lifetime,
	 * fragmentation): ntypes names/units; values(agg, vals[ntypes]). */
	size_t ntypes;
	const char *const *type_names, *const *type_units;
	void (*values)(const struct hs_stack_agg *a, int64_t *vals);
};

/* Sample types a profile can carry (= common/pprof.h PPROF_MAX_VALUES). */
#define HS_PPROF_MAX_TYPES 16

/* A value as pprof's int64: v rounded to the nearest integer (halves away
 * from zero), INT64_MAX above 9e18. */
int64_t hs_pprof__round(double v);

/* Labels a sample can carry: pid (string and number), nspid, comm, exe,
 * cgroup, container_id, systemd_unit. */
#define HS_PPROF_MAX_LABELS 8

/*
 * A profile built a process at a time (the daemon's host profile):
 * begin with m's sample types, period, time and comments (m must outlive
 * the builder); add each process's stacks, symbolized through syms (may
 * be NULL), with the labels of who (pid, nspid, comm, exe, cgroup,
 * container_id, unit; the rest of who is not read); each process gets
 * its own mappings and locations, so equal addresses of two processes
 * stay apart.  end encodes into *out (malloc'd; out NULL: only frees)
 * and frees the builder, also after an error.  0 or -errno (-ENOMEM,
 * -EINVAL).
 */
struct hs_pprof;
int hs_pprof__begin(const struct hs_pprof_meta *m, struct hs_pprof **out);
int hs_pprof__add(struct hs_pprof *x, const struct hs_stack_agg *aggs, size_t n,
		  struct hs_syms *syms, const struct hs_pprof_meta *who);
int hs_pprof__end(struct hs_pprof *x, uint8_t **out, size_t *len);

/*
 * Encode aggregated stacks as a gzip'd pprof profile: sample types
 * [inuse|alloc]_objects/count, [inuse|alloc]_space/bytes,
 * [inuse|alloc]_requested_space/bytes, samples/count; *out is malloc'd.
 * syms may be NULL (every frame "[unknown]").
 */
int hs_pprof__build(const struct hs_stack_agg *aggs, size_t n,
		    struct hs_syms *syms, const struct hs_pprof_meta *m,
		    uint8_t **out, size_t *len);

/* ----------------------------------------------------- "export_leaks.c" */

/* One site of the leak-trend view. */
struct hs_leak_row {
	char *stack; /* folded text, "root;...;leaf" */
	struct hs_leak_fit fit;
	double inuse;	     /* bytes in use now (estimate) */
	double oldest_age_s; /* of its live samples */
	double mean_age_s;
	uint64_t samples; /* live samples */
	double score;	  /* hs_leak__score */
	bool growing;	  /* hs_leak__growing */
};

/* Symbolize the n series (sym may be NULL: "[unknown]"), sum those with
 * the same folded text, fit, score and rank them most suspect first
 * (growing sites by growth, then by score, then by bytes in use).  *rows
 * malloc'd (never NULL on success): 0 or -ENOMEM. */
int hs_leaks__report(const struct hs_leak_series *s, size_t n,
		     hs_symbolize_fn sym, void *sym_ctx,
		     struct hs_leak_row **rows, size_t *nrows);
void hs_leak_rows__free(struct hs_leak_row *r, size_t n);
/* The view as JSON (the layout at the top of export_leaks.c; bytes,
 * bytes/s, seconds); period: the target's sampling period, bytes (<= 0:
 * off or not known, written as 0).  0 or -EIO. */
int hs_leaks__write_json(FILE *f, pid_t pid, double window_s,
			 double interval_s, int64_t period,
			 const struct hs_leak_row *r, size_t n);

/* ----------------------------------------------------- "export_text.c" */

/* Short top list ("flat" per leaf function and the heaviest stacks) of
 * folded lines; total is the profile's total value. */
int hs_text__write(FILE *f, const struct hs_folded_line *lines, size_t n,
		   enum hs_value v);

/* ------------------------------------------------------ "export_rss.c" */

/* The RSS table (profiles/rss.c) as one JSON object and a newline:
 * {"pid", "rss_bytes", "parts": {...}, "parts_sum_bytes",
 *  "heap_in_use_estimate_bytes", "detail": {...}, ...}
 * (docs/profiles.md names every field).  -EIO when f failed. */
int hs_rss__write_json(FILE *f, const struct hs_rss_table *t);

/* Prometheus families of the RSS table, one per index below
 * HS_RSS_PROM_FAMILIES: heapscope_process_rss_bytes (the kernel's),
 * heapscope_process_rss_part_bytes{part="..."} (the parts),
 * heapscope_process_heap_in_use_estimate_bytes (the sampled estimate),
 * heapscope_process_heap_in_use_bytes (the exact bytes handed out).
 * hs_rss__prom_help writes family fam's HELP and TYPE lines;
 * hs_rss__prom_samples its samples for t, each with the labels
 * `labels` (already escaped, e.g. pid="1",comm="x"; "" for none). */
#define HS_RSS_PROM_FAMILIES 4
void hs_rss__prom_help(FILE *f, unsigned fam);
void hs_rss__prom_samples(FILE *f, unsigned fam, const struct hs_rss_table *t,
			  const char *labels);

/* ---------------------------------------------------------- "render.c" */

/* What hs_render turns into bytes. */
struct hs_render {
	/* aggregated stacks: pprof, and folded / text when lines is NULL */
	const struct hs_stack_agg *aggs;
	size_t naggs;
	/* folded / text: the folded lines if the caller has them already
	 * (NULL: built from aggs with value and syms) */
	const struct hs_folded_line *lines;
	size_t nlines;
	enum hs_value value;		  /* folded / text value */
	struct hs_syms *syms;		  /* may be NULL: frames "[unknown]" */
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

/*
 * A host profile: several processes rendered as one profile, a process at
 * a time.  new: fmt, the folded / text value, meta (types, period, time,
 * comments; must outlive the renderer), text_notes as hs_render's.  add:
 * one process's stacks, symbolized through syms (the caller holds what
 * protects it), with who's labels (pprof) or under a root frame
 * "COMM (PID)" (folded, text: so a flame graph groups by process).  end:
 * *out malloc'd (*len bytes; out NULL: only frees); frees h, also after
 * an error.  0 or -errno (-ENOMEM).
 */
struct hs_render_host;
int hs_render_host__new(enum hs_format fmt, enum hs_value value,
			const struct hs_pprof_meta *meta, bool text_notes,
			struct hs_render_host **out);
int hs_render_host__add(struct hs_render_host *h,
			const struct hs_stack_agg *aggs, size_t n,
			struct hs_syms *syms, const struct hs_pprof_meta *who);
int hs_render_host__end(struct hs_render_host *h, uint8_t **out, size_t *len);

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

/* Comment lines hs_report__comments writes at most. */
#define HS_REPORT_MAX_NOTES 4
/* Bytes of one comment line: the longest fixed text and numbers (< 256)
 * plus the target's binary path (< PATH_MAX), so no note is cut. */
#define HS_REPORT_NOTE_LEN (PATH_MAX + 256)

/* Fill up to max (>= 3; HS_REPORT_MAX_NOTES for every note) comment
 * lines of HS_REPORT_NOTE_LEN bytes; returns how many. */
int hs_report__comments(char out[][HS_REPORT_NOTE_LEN], size_t max,
			const struct hs_report_stats *st);

/* ------------------------------------------------------------ "json.c" */

/* Write str (NUL-terminated, any bytes) to f as a JSON string, quotes
 * included: '"', '\\' and control bytes escaped, each byte that does not
 * start well-formed UTF-8 as \ufffd.  Thread-safe (stdio's own lock). */
void hs_json__str(FILE *f, const char *str);

/* ---------------------------------------------------------- "output.c" */

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

#endif /* HS_EXPORT_H */
