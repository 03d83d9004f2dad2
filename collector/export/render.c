// SPDX-License-Identifier: MIT
/*
 * render.c - one profile to the bytes of the format asked for (folded,
 * pprof, text), and the notes every profile carries (lost events,
 * sampling cost, what compatible probes cannot hold).  The one render
 * for `record` (which writes the bytes with output.c), every HTTP
 * handler of the daemon and its SIGHUP dumps.  A host profile (several
 * processes in one profile) is rendered a process at a time
 * (hs_render_host__*): pprof with each process's labels, folded and text
 * with a root frame "comm (pid)" per process.
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

struct hs_render_host {
	enum hs_format fmt;
	enum hs_value value;
	const struct hs_pprof_meta *meta;
	bool text_notes;
	struct hs_pprof *x;	      /* pprof */
	struct hs_folded_line *lines; /* folded, text: every process's */
	size_t nlines, cap;
};

int hs_render_host__new(enum hs_format fmt, enum hs_value value,
			const struct hs_pprof_meta *meta, bool text_notes,
			struct hs_render_host **out)
{
	struct hs_render_host *h = calloc(1, sizeof(*h));
	int err;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	*h = (struct hs_render_host){.fmt = fmt,
				     .value = value,
				     .meta = meta,
				     .text_notes = text_notes};
	if (fmt == HS_FORMAT_PPROF) {
		err = hs_pprof__begin(meta, &h->x);
		if (err) {
			free(h);
			return err;
		}
	}
	*out = h;
	return 0;
}

int hs_render_host__add(struct hs_render_host *h,
			const struct hs_stack_agg *aggs, size_t n,
			struct hs_syms *syms, const struct hs_pprof_meta *who)
{
	struct hs_folded_line *lines;
	size_t nlines;
	char frame[64];
	int err;

	if (h->fmt == HS_FORMAT_PPROF)
		return hs_pprof__add(h->x, aggs, n, syms, who);
	err = hs_folded__build(aggs, n, h->value, hs_window__sym, syms, &lines,
			       &nlines);
	if (err)
		return err;
	snprintf(frame, sizeof(frame), "%s (%d)", who->comm ? who->comm : "",
		 (int)who->pid);
	err = hs_folded__prefix(lines, nlines, frame);
	if (!err && h->nlines + nlines > h->cap) {
		size_t ncap = (h->nlines + nlines) * 2;
		struct hs_folded_line *nl =
			realloc(h->lines, ncap * sizeof(*nl));

		if (!nl) {
			err = -ENOMEM;
		} else {
			h->lines = nl;
			h->cap = ncap;
		}
	}
	if (err) {
		hs_folded__free(lines, nlines);
		return err;
	}
	memcpy(h->lines + h->nlines, lines, nlines * sizeof(*lines));
	h->nlines += nlines;
	free(lines); /* the stacks moved to h->lines */
	return 0;
}

int hs_render_host__end(struct hs_render_host *h, uint8_t **out, size_t *len)
{
	struct hs_render r;
	int err = 0;

	if (!h)
		return 0;
	if (h->fmt == HS_FORMAT_PPROF) {
		err = hs_pprof__end(h->x, out, len);
	} else if (out) {
		hs_folded__sort(h->lines, h->nlines);
		r = (struct hs_render){.value = h->value,
				       .meta = h->meta,
				       .text_notes = h->text_notes};
		err = render_text(&r, h->fmt, h->lines, h->nlines, out, len);
	}
	hs_folded__free(h->lines, h->nlines);
	free(h);
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
