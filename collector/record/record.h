/* SPDX-License-Identifier: MIT */
/*
 * record.h - collector/record/: `heapscope record` across its files: the
 * command line (options.c), the phases from check to clean-up (record.c,
 * its entry point hs_record_main in cli.h) and the report
 * (record_report.c).  `record` is single-threaded: none of these is
 * thread-safe.
 */
#ifndef HS_RECORD_H
#define HS_RECORD_H

#include <stdbool.h>
#include <sys/types.h>

#include "events.h"
#include "export.h"
#include "heapscope_event.h"
#include "kinds.h"
#include "symbolize.h"
#include "target.h"

/* --------------------------------------------------------- "options.c" */

/* What `record` was asked for (the command line). */
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
	bool raw_symbols; /* --symbolize=none: addresses and mappings only */
};

/*
 * Parse argv (as for hs_record_main) into o, whose defaults
 * the caller has set.  Returns 0; 1 when the help was printed (exit 0);
 * -EINVAL after a message on stderr.  Uses getopt's global state.
 */
int hs_record__parse_args(int argc, char **argv, struct hs_options *o);

/* ---------------------------------------------------------- "record.c" */

/* What another command adds to record's pipeline (`heapscope leaks`). */
struct hs_record_hooks {
	const char *cmd; /* its name in messages ("heapscope CMD: ...") */
	/* Each turn of the loop (at most ~100 ms apart), with the events
	 * so far applied to ev; now_ns CLOCK_MONOTONIC.  Nonzero (-errno)
	 * ends the run with that error. */
	int (*tick)(void *ctx, struct hs_events *ev, uint64_t now_ns);
	/* Instead of the profile report, once the loop has ended and the
	 * ring buffer is drained; syms may be NULL.  Its return is the
	 * run's. */
	int (*report)(void *ctx, const struct hs_options *o,
		      struct hs_events *ev, struct hs_syms *syms);
	void *ctx;
};

/*
 * The pipeline of `record`: check, open, load, attach (o->pid), read the
 * registry, loop until o->duration_s, a signal (SIGINT/SIGTERM: the
 * caller installs the handler hs_record_main does) or the target's end,
 * then report (record_report.c, or h->report).  h may be NULL.  0 or
 * -errno after a one-line message on stderr.
 */
int hs_record__run(const struct hs_options *o,
		   const struct hs_record_hooks *h);
/* The SIGINT/SIGTERM handler hs_record__run stops on. */
void hs_record__on_signal(int sig);

/* --------------------------------------------------- "record_report.c" */

/*
 * Write the profile of t (pid o->pid) to o->output (NULL
 * or "-": stdout) in o->format, with the notes (live samples, lost events
 * lost[HS_LOST_*] from the BPF map, sampling period and cost) as pprof
 * comments; aggs/lines are the aggregated and folded stacks, syms the
 * process's symbols (may be NULL), start_ns the CLOCK_REALTIME of the
 * start in ns.  Returns 0 or -errno of the write.
 */
int hs_record__write_report(const struct hs_options *o,
			    const struct hs_target *t,
			    const struct hs_proc_info *pi,
			    const struct hs_events *ev, struct hs_syms *syms,
			    const struct hs_stack_agg *aggs, size_t naggs,
			    const struct hs_folded_line *lines, size_t nlines,
			    const uint64_t lost[HS_LOST_NR], uint64_t start_ns);

/* The summary on stderr: live samples, the total in
 * o->value's unit, events and losses (seq_lost: sequence gaps), and the
 * five heaviest of the n folded lines (sorted, heaviest first). */
void hs_record__print_summary(const struct hs_options *o,
			      const struct hs_events *ev,
			      const struct hs_folded_line *lines, size_t n,
			      const uint64_t lost[HS_LOST_NR],
			      uint64_t seq_lost);

/* On stderr, once the probes are armed: what record is attached to (path
 * in process o->pid), until when it records, and how to stop it. */
void hs_record__print_attached(const struct hs_options *o, const char *path);
/* The progress line on stderr (a terminal: the caller checks isatty(2)),
 * redrawn in place with \r: elapsed_ns since the attach, live samples,
 * events (allocs + frees) and lost events (sum of lost[HS_LOST_*] and
 * seq_lost).  The caller rate-limits it (once a second) and ends it with
 * a newline. */
void hs_record__print_progress(const struct hs_events *ev,
			       uint64_t elapsed_ns,
			       const uint64_t lost[HS_LOST_NR],
			       uint64_t seq_lost);

#endif /* HS_RECORD_H */
