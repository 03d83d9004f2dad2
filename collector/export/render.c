// SPDX-License-Identifier: MIT
/*
 * render.c - one profile to the bytes of the format asked for (folded,
 * pprof, text), and the notes every profile carries (lost events,
 * sampling cost, what compatible probes cannot hold).  The one render
 * for `record` (which writes the bytes with output.c), every HTTP
 * handler of the daemon and its SIGHUP dumps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

/* Folded text or the text top list of the folded lines. */
static int render_text(const struct hs_render *r, enum hs_format fmt,
		       const struct hs_folded_line *lines, size_t nlines,
		       uint8_t **out, size_t *len)
{
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	int err;

	if (!f)
		return -ENOMEM;
	if (fmt == HS_FORMAT_TEXT) {
		for (size_t i = 0; r->text_notes && i < r->meta->ncomments; i++)
			fprintf(f, "# %s\n", r->meta->comments[i]);
		err = hs_text__write(f, lines, nlines, r->value);
	} else {
		err = hs_folded__write(f, lines, nlines);
	}
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(text);
		return err;
	}
	*out = (uint8_t *)text;
	*len = tlen;
	return 0;
}

int hs_render(const struct hs_render *r, enum hs_format fmt, uint8_t **out,
	      size_t *len)
{
	struct hs_folded_line *lines = NULL;
	size_t nlines = 0;
	int err;

	if (fmt == HS_FORMAT_PPROF)
		return hs_pprof__build(r->aggs, r->naggs, r->syms, r->meta, out,
				       len);
	if (r->lines)
		return render_text(r, fmt, r->lines, r->nlines, out, len);
	err = hs_folded__build(r->aggs, r->naggs, r->value, hs_window__sym,
			       r->syms, &lines, &nlines);
	if (!err)
		err = render_text(r, fmt, lines, nlines, out, len);
	hs_folded__free(lines, nlines);
	return err;
}

int hs_report__comments(char out[][HS_REPORT_NOTE_LEN], size_t max,
			const struct hs_report_stats *st)
{
	size_t n = 0;

	if (max < 3)
		return 0;
	snprintf(out[n++], HS_REPORT_NOTE_LEN,
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
		snprintf(out[n++], HS_REPORT_NOTE_LEN,
			 "heapscope: %s probes, no registry: only allocations "
			 "sampled after the attach are here; %llu frees of "
			 "earlier ones ignored",
			 hs_provider_name(st->provider),
			 (unsigned long long)st->compat_unmatched);
		if (st->compat_no_free && max >= 4)
			snprintf(out[n++], HS_REPORT_NOTE_LEN,
				 "heapscope: the object has no %s:free probe: "
				 "every allocation since the attach counts as "
				 "live",
				 hs_provider_name(st->provider));
	} else {
		snprintf(out[n++], HS_REPORT_NOTE_LEN,
			 "heapscope: sampling period %lld bytes; sampling cost "
			 "in the target: %llu bytes of pages held by sampled "
			 "objects (+%llu cached for reuse), %llu registry "
			 "records",
			 (long long)st->period,
			 (unsigned long long)st->sampled_bytes,
			 (unsigned long long)st->cached_bytes,
			 (unsigned long long)st->records);
	}
	snprintf(out[n++], HS_REPORT_NOTE_LEN, "heapscope: pid %d (nspid %d) %s", st->pid,
		 st->nspid, st->binary ? st->binary : "");
	return (int)n;
}
