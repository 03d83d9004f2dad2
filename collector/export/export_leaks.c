// SPDX-License-Identifier: MIT
/*
 * export_leaks.c - the leak-trend view as JSON, for `heapscope leaks` and
 * the daemon's /debug/heapscope/leaks: the series of a store
 * (profiles/leaks.c) symbolized into folded stack text, the series of
 * raw stacks with the same text summed point by point (they share one
 * timeline), each fitted and scored (profiles/leak_stats.c), and ranked
 * most suspect first:
 *
 *   {"pid": N, "window_seconds": S, "interval_seconds": I, "stacks": [
 *    {"stack": "root;...;leaf", "growth_bytes_per_second": G,
 *     "inuse_bytes": B, "oldest_live_age_seconds": A, ...}, ...]}
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

struct named {
	char *text;
	const struct hs_leak_series *s;
};

static int cmp_text(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->text,
		      ((const struct named *)b)->text);
}

/* Most suspect first: growing sites by growth, then the rest by score,
 * then by bytes in use; the text breaks ties. */
static int cmp_rank(const void *a, const void *b)
{
	const struct hs_leak_row *x = a, *y = b;

	if (x->growing != y->growing)
		return x->growing ? -1 : 1;
	if (x->growing && x->fit.slope != y->fit.slope)
		return x->fit.slope > y->fit.slope ? -1 : 1;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->inuse != y->inuse)
		return x->inuse > y->inuse ? -1 : 1;
	return strcmp(x->stack, y->stack);
}

/* Sum the series g[0..k) (same text) over their common last points,
 * fit and score the sum into *r (which takes the text). */
static int row_of(struct named *g, size_t k, struct hs_leak_row *r)
{
	size_t m = g[0].s->n;
	double *buf, *t, *y, *v, aged = 0;

	for (size_t i = 1; i < k; i++)
		if (g[i].s->n < m)
			m = g[i].s->n;
	buf = calloc(m ? 3 * m : 1, sizeof(double));
	if (!buf)
		return -ENOMEM;
	t = buf;
	y = t + m;
	v = y + m;
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < k; i++) {
		const struct hs_leak_series *s = g[i].s;
		size_t off = s->n - m;

		for (size_t j = 0; j < m; j++) {
			t[j] = s->t_s[off + j];
			y[j] += s->inuse[off + j];
			v[j] += s->var[off + j];
		}
		r->inuse += s->inuse_now;
		r->samples += s->samples;
		if (s->oldest_age_s > r->oldest_age_s)
			r->oldest_age_s = s->oldest_age_s;
		r->mean_age_s += s->mean_age_s * s->inuse_now;
		aged += s->inuse_now;
	}
	if (aged > 0)
		r->mean_age_s /= aged;
	hs_leak__fit(t, y, v, m, &r->fit);
	r->score = hs_leak__score(&r->fit, r->oldest_age_s);
	r->growing = hs_leak__growing(&r->fit, r->oldest_age_s);
	r->stack = g[0].text;
	g[0].text = NULL;
	free(buf);
	return 0;
}

int hs_leaks__report(const struct hs_leak_series *s, size_t n,
		     hs_symbolize_fn sym, void *sym_ctx,
		     struct hs_leak_row **rows, size_t *nrows)
{
	struct named *nm = calloc(n ? n : 1, sizeof(*nm));
	struct hs_leak_row *r = calloc(n ? n : 1, sizeof(*r));
	size_t out = 0;
	int err = 0;

	*rows = NULL;
	*nrows = 0;
	if (!nm || !r) {
		err = -ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < n && !err; i++) {
		nm[i].s = &s[i];
		nm[i].text = hs_folded__stack_text(s[i].stack, s[i].depth, sym,
						   sym_ctx);
		if (!nm[i].text)
			err = -ENOMEM;
	}
	if (err)
		goto done;
	qsort(nm, n, sizeof(*nm), cmp_text);
	for (size_t i = 0; i < n && !err;) {
		size_t j = i + 1;

		while (j < n && !strcmp(nm[j].text, nm[i].text))
			j++;
		err = row_of(nm + i, j - i, &r[out]);
		if (!err)
			out++;
		i = j;
	}
	if (!err) {
		qsort(r, out, sizeof(*r), cmp_rank);
		*rows = r;
		*nrows = out;
		r = NULL;
	}
done:
	for (size_t i = 0; nm && i < n; i++)
		free(nm[i].text);
	free(nm);
	hs_leak_rows__free(r, out);
	return err;
}

void hs_leak_rows__free(struct hs_leak_row *r, size_t n)
{
	if (!r)
		return;
	for (size_t i = 0; i < n; i++)
		free(r[i].stack);
	free(r);
}

/* A finite number (JSON has no NaN or infinity). */
static double fin(double v)
{
	return isfinite(v) ? v : 0;
}

int hs_leaks__write_json(FILE *f, pid_t pid, double window_s, double interval_s,
			 int64_t period, const struct hs_leak_row *r, size_t n)
{
	fprintf(f,
		"{\"pid\": %d, \"window_seconds\": %.3f, "
		"\"interval_seconds\": %.3f, \"sampling_period_bytes\": %lld, "
		"\"stacks\": [",
		(int)pid, fin(window_s), fin(interval_s),
		(long long)(period > 0 ? period : 0));
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n  {\"stack\": " : "\n  {\"stack\": ", f);
		hs_json__str(f, r[i].stack);
		fprintf(f,
			", \"growth_bytes_per_second\": %.1f, "
			"\"inuse_bytes\": %.0f, "
			"\"oldest_live_age_seconds\": %.3f, "
			"\"mean_live_age_seconds\": %.3f, \"growing\": %s, "
			"\"score\": %.3f, \"t\": %.3f, "
			"\"growth_stderr_bytes_per_second\": %.1f, "
			"\"growth_stderr_sampling_bytes_per_second\": %.1f, "
			"\"samples\": %llu, \"points\": %zu}",
			fin(r[i].fit.slope), fin(r[i].inuse),
			fin(r[i].oldest_age_s), fin(r[i].mean_age_s),
			r[i].growing ? "true" : "false", fin(r[i].score),
			fin(r[i].fit.t), fin(r[i].fit.se),
			fin(r[i].fit.se_sampling),
			(unsigned long long)r[i].samples, r[i].fit.points);
	}
	fputs(n ? "\n]}\n" : "]}\n", f);
	return ferror(f) ? -EIO : 0;
}
