/* SPDX-License-Identifier: MIT */
/*
 * record.h - `heapscope record` across its files: the command line
 * (options.c), the phases from check to clean-up (record.c) and the report
 * (record_report.c).  `record` is single-threaded: none of these is
 * thread-safe.
 */
#ifndef HS_RECORD_H
#define HS_RECORD_H

#include "heapscope.h"
#include "heapscope_event.h"

/*
 * `heapscope record ...`: argv[0] is the program, argv[1] the command; no
 * command, -h/--help and an unknown command are answered here too (usage
 * or an error on stderr).  Installs the SIGINT/SIGTERM handlers.  Returns
 * the process exit status: 0, 1 (recording failed), 2 (bad command line).
 */
int hs_record_main(int argc, char **argv);

/*
 * options.c: parse argv (as for hs_record_main) into o, whose defaults
 * the caller has set.  Returns 0; 1 when the help was printed (exit 0);
 * -EINVAL after a message on stderr.  Uses getopt's global state.
 */
int hs_record__parse_args(int argc, char **argv, struct hs_options *o);

/*
 * record_report.c: write the profile of t (pid o->pid) to o->output (NULL
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

/* record_report.c: the summary on stderr: live samples, the total in
 * o->value's unit, events and losses (seq_lost: sequence gaps), and the
 * five heaviest of the n folded lines (sorted, heaviest first). */
void hs_record__print_summary(const struct hs_options *o,
			      const struct hs_events *ev,
			      const struct hs_folded_line *lines, size_t n,
			      const uint64_t lost[HS_LOST_NR],
			      uint64_t seq_lost);

#endif /* HS_RECORD_H */
