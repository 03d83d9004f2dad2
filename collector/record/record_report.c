// SPDX-License-Identifier: MIT
/*
 * record_report.c - the report phase of `heapscope record`: the profile
 * written in the requested format with its notes (pprof comments), and
 * the summary on stderr.
 */
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "record.h"

void hs_record__print_summary(const struct hs_options *o,
			      const struct hs_events *ev,
			      const struct hs_folded_line *lines, size_t n,
			      const uint64_t lost[HS_LOST_NR],
			      uint64_t seq_lost)
{
	double total = 0;

	_Static_assert(HS_LOST_NR == 3, "the summary names every lost slot");
	for (size_t i = 0; i < n; i++)
		total += lines[i].value;
	fprintf(stderr,
		"heapscope: pid %d: %zu live samples, estimated %.0f %s, %zu "
		"stacks\n",
		o->pid, hs_profile__live(ev->prof), total,
		hs_value_name(o->value), n);
	fprintf(stderr,
		"heapscope: events: %llu allocs, %llu frees; lost: %llu ring "
		"buffer, %llu stack reads, %llu args, %llu sequence gaps, %llu "
		"malformed\n",
		(unsigned long long)ev->allocs, (unsigned long long)ev->frees,
		(unsigned long long)lost[HS_LOST_RINGBUF],
		(unsigned long long)lost[HS_LOST_STACK],
		(unsigned long long)lost[HS_LOST_ARGS],
		(unsigned long long)seq_lost, (unsigned long long)ev->bad);
	for (size_t i = 0; i < n && i < 5; i++)
		fprintf(stderr, "  #%zu %12.0f  %.300s\n", i + 1,
			lines[i].value, lines[i].stack);
}

void hs_record__print_attached(const struct hs_options *o, const char *path)
{
	if (o->duration_s)
		fprintf(stderr,
			"heapscope: attached to %s in process %d; recording "
			"for %d s or until it exits (Ctrl-C or kill -INT %d "
			"stops early and writes its output)\n",
			path, o->pid, o->duration_s, (int)getpid());
	else
		fprintf(stderr,
			"heapscope: attached to %s in process %d; recording "
			"until it exits (Ctrl-C or kill -INT %d stops and "
			"writes its output)\n",
			path, o->pid, (int)getpid());
}

void hs_record__print_progress(const struct hs_events *ev,
			       uint64_t elapsed_ns,
			       const uint64_t lost[HS_LOST_NR],
			       uint64_t seq_lost)
{
	uint64_t nlost = seq_lost;

	for (int i = 0; i < HS_LOST_NR; i++)
		nlost += lost[i];
	/* \r and erase to the end of the line: one line, redrawn */
	fprintf(stderr,
		"\rheapscope: %llu s, %zu live samples, %llu events, %llu "
		"lost\033[K",
		(unsigned long long)(elapsed_ns / HS_NS_PER_S),
		hs_profile__live(ev->prof),
		(unsigned long long)(ev->allocs + ev->frees),
		(unsigned long long)nlost);
	fflush(stderr);
}

int hs_record__write_report(const struct hs_options *o,
			    const struct hs_target *t,
			    const struct hs_proc_info *pi,
			    const struct hs_events *ev, struct hs_syms *syms,
			    const struct hs_stack_agg *aggs, size_t naggs,
			    const struct hs_folded_line *lines, size_t nlines,
			    const uint64_t lost[HS_LOST_NR], uint64_t start_ns)
{
	struct hs_report_stats st = {
		.pid = o->pid,
		.nspid = pi->nspid,
		.binary = pi->binary,
		.live = hs_profile__live(ev->prof),
		.lost_ringbuf = lost[HS_LOST_RINGBUF],
		/* record follows one pid: every drop is its own */
		.lost_ringbuf_proc = lost[HS_LOST_RINGBUF],
		.seq_lost = hs_profile__seq_lost(ev->prof),
		.lost_stack = lost[HS_LOST_STACK],
		.period = ev->period,
		.provider = t->provider,
		.compat_no_free = !hs_notes_have_free(t->notes, t->provider),
		.compat_unmatched = ev->compat_unmatched,
	};
	struct heapscope_registry h;
	struct hs_render rd;
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;
	/* the notes, and one line of the profile kind's own */
	char comments[HS_REPORT_MAX_NOTES + 1][HS_REPORT_NOTE_LEN];
	const char *cptr[HS_REPORT_MAX_NOTES + 1];
	uint64_t addr, now = hs_wall_ns();
	struct hs_pprof_meta meta = {
		.pid = o->pid,
		.nspid = pi->nspid,
		.comm = pi->comm,
		.cgroup = pi->cgroup,
		.period = ev->period,
		.time_nanos = (int64_t)start_ns,
		.duration_nanos = (int64_t)(now - start_ns),
		.comments = cptr,
		.residency = o->profile == HS_PROFILE_HEAP,
		.allocs = o->profile == HS_PROFILE_ALLOCS,
	};

	if (!hs_registry__locate(t, &addr) &&
	    !hs_registry__read_header(o->pid, addr, &h)) {
		st.sampled_bytes = h.sampled_bytes;
		st.cached_bytes = h.cached_bytes;
		st.records = h.live;
	}
	meta.ncomments = hs_report__comments(comments, HS_REPORT_MAX_NOTES, &st);
	if (o->profile == HS_PROFILE_LIFETIME)
		hs_window__pprof_lifetime(&meta);
	else if (o->profile == HS_PROFILE_FRAGMENTATION) {
		uint64_t cov, uncov;
		double cb, ub;

		hs_fragmentation__pprof(&meta);
		hs_fragmentation__coverage(ev->prof, &cov, &uncov, &cb, &ub);
		snprintf(comments[meta.ncomments], HS_REPORT_NOTE_LEN,
			 "heapscope: fragmentation covers %llu live samples "
			 "(%.0f est. bytes); %llu (%.0f bytes) have no proxy "
			 "(HEAPSCOPE_PROXY_MAX)",
			 (unsigned long long)cov, cb,
			 (unsigned long long)uncov, ub);
		meta.ncomments++;
	}
	if (o->profile == HS_PROFILE_PEAK && ev->win) {
		double total;
		struct hs_stack_agg *tmp;
		size_t ntmp;

		if (!hs_window__peak(ev->win, &tmp, &ntmp, &total)) {
			free(tmp);
			snprintf(comments[meta.ncomments], HS_REPORT_NOTE_LEN,
				 "heapscope: peak profile: estimated in-use "
				 "total %.0f bytes (1%% resolution, %llu "
				 "copies)",
				 total,
				 (unsigned long long)hs_window__peak_snapshots(
					 ev->win));
			meta.ncomments++;
		}
	}
	for (size_t i = 0; i < meta.ncomments; i++)
		cptr[i] = comments[i];
	rd = (struct hs_render){
		.aggs = aggs,
		.naggs = naggs,
		.lines = lines,
		.nlines = nlines,
		.value = o->value,
		.syms = syms,
		.meta = &meta,
	};
	err = hs_render(&rd, o->format, &buf, &len);
	if (!err)
		err = hs_write_file_atomic(o->output, buf, len);
	free(buf);
	return err;
}
