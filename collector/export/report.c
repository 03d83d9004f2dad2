// SPDX-License-Identifier: MIT
/*
 * report.c - writing one profile in the format asked for (folded, pprof,
 * text) to a file (atomically) or stdout, and the comments every pprof
 * profile carries (lost events, sampling cost).  Shared by `record` and
 * the daemon's dumps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heapscope.h"

int hs_report__write(const char *path, enum hs_format fmt, enum hs_value v,
		     const struct hs_stack_agg *aggs, size_t naggs,
		     const struct hs_folded_line *lines, size_t nlines,
		     struct hs_syms *syms, const struct hs_pprof_meta *meta)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	char *text = NULL;
	FILE *f;
	int err;

	switch (fmt) {
	case HS_FORMAT_PPROF:
		err = hs_pprof__build(aggs, naggs, syms, meta, &buf, &len);
		if (!err)
			err = hs_write_file_atomic(path, buf, len);
		free(buf);
		return err;
	case HS_FORMAT_TEXT:
		f = open_memstream(&text, &len);
		if (!f)
			return -ENOMEM;
		err = hs_text__write(f, lines, nlines, v);
		if (fclose(f))
			err = err ? err : -ENOMEM;
		if (!err)
			err = hs_write_file_atomic(path, text, len);
		free(text);
		return err;
	default:
		return hs_folded__write_file(path, lines, nlines);
	}
}

int hs_report__comments(char out[][160], size_t max,
			const struct hs_report_stats *st)
{
	size_t n = 0;

	if (max < 3)
		return 0;
	snprintf(out[n++], 160,
		 "heapscope: %llu live samples; lost events: %llu ring buffer "
		 "(this process; %llu all), %llu sequence gaps, %llu stack "
		 "reads",
		 (unsigned long long)st->live,
		 (unsigned long long)st->lost_ringbuf_proc,
		 (unsigned long long)st->lost_ringbuf,
		 (unsigned long long)st->seq_lost,
		 (unsigned long long)st->lost_stack);
	if (st->provider == HS_PROVIDER_OTEL ||
	    st->provider == HS_PROVIDER_DDHEAP) {
		/* No registry behind these probes: say what is missing. */
		snprintf(out[n++], 160,
			 "heapscope: %s probes, no registry: only allocations "
			 "sampled after the attach are here; %llu frees of "
			 "earlier ones ignored",
			 hs_provider_name(st->provider),
			 (unsigned long long)st->compat_unmatched);
		if (st->compat_no_free && max >= 4)
			snprintf(out[n++], 160,
				 "heapscope: the object has no %s:free probe: "
				 "every allocation since the attach counts as "
				 "live",
				 hs_provider_name(st->provider));
	} else {
		snprintf(out[n++], 160,
			 "heapscope: sampling period %lld bytes; sampling cost "
			 "in the target: %llu bytes of pages held by sampled "
			 "objects (+%llu cached for reuse), %llu registry "
			 "records",
			 (long long)st->period,
			 (unsigned long long)st->sampled_bytes,
			 (unsigned long long)st->cached_bytes,
			 (unsigned long long)st->records);
	}
	snprintf(out[n++], 160, "heapscope: pid %d (nspid %d) %s", st->pid,
		 st->nspid, st->binary ? st->binary : "");
	return (int)n;
}
