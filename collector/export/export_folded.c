// SPDX-License-Identifier: MIT
/*
 * export_folded.c - flame-graph folded text: one line per stack,
 * "root;...;leaf VALUE", outermost frame first (the sampled stacks are
 * innermost first), VALUE an integer, lines sorted by value descending.
 * Distinct raw stacks that symbolize to the same text are merged.  A call
 * inlined at an address is a frame of its own (symbolize.h's
 * HS_FRAME_SEP between the names of one address).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

static int cmp_text(const void *a, const void *b)
{
	const struct hs_folded_line *x = a, *y = b;

	return strcmp(x->stack, y->stack);
}

static int cmp_value(const void *a, const void *b)
{
	const struct hs_folded_line *x = a, *y = b;
	long long vx = llround(x->value), vy = llround(y->value);

	if (vx != vy)
		return vx < vy ? 1 : -1;
	return strcmp(x->stack, y->stack);
}

/* Append one frame name, replacing the folded format's separators. */
static int append(char **buf, size_t *len, size_t *cap, const char *name,
		  bool raw)
{
	size_t nl = strlen(name);

	if (*len + nl + 2 > *cap) {
		size_t ncap = (*cap + nl + 2) * 2;
		char *nb = realloc(*buf, ncap);

		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = ncap;
	}
	for (size_t i = 0; i < nl; i++) {
		char c = name[i];

		/* HS_FRAME_SEP: the frames of inlined calls (symbolize.h) */
		if (!raw && c == HS_FRAME_SEP)
			c = ';';
		else if (!raw && (c == ';' || c == '\n'))
			c = '_';
		(*buf)[(*len)++] = c;
	}
	(*buf)[*len] = '\0';
	return 0;
}

char *hs_folded__stack_text(const uint64_t *stack, uint32_t depth,
			    hs_symbolize_fn sym, void *ctx)
{
	size_t len = 0, cap = 256;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	buf[0] = '\0';
	if (!depth && append(&buf, &len, &cap, "[no stack]", false))
		goto fail;
	for (uint32_t i = depth; i-- > 0;) {
		const char *name = sym ? sym(ctx, stack[i]) : NULL;

		if (!name || !*name)
			name = "[unknown]";
		if (append(&buf, &len, &cap, name, false))
			goto fail;
		if (i && append(&buf, &len, &cap, ";", true))
			goto fail;
	}
	return buf;
fail:
	free(buf);
	return NULL;
}

int hs_folded__build(const struct hs_stack_agg *aggs, size_t n, enum hs_value v,
		     hs_symbolize_fn sym, void *sym_ctx,
		     struct hs_folded_line **lines, size_t *nlines)
{
	struct hs_folded_line *l;
	size_t out = 0;

	*lines = NULL;
	*nlines = 0;
	l = calloc(n ? n : 1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		l[i].stack = hs_folded__stack_text(aggs[i].stack, aggs[i].depth,
						   sym, sym_ctx);
		if (!l[i].stack) {
			hs_folded__free(l, i);
			return -ENOMEM;
		}
		l[i].value = hs_agg_value(&aggs[i], v);
		l[i].samples = aggs[i].samples;
	}
	qsort(l, n, sizeof(*l), cmp_text);
	for (size_t i = 0; i < n; i++) {
		if (out && !strcmp(l[out - 1].stack, l[i].stack)) {
			l[out - 1].value += l[i].value;
			l[out - 1].samples += l[i].samples;
			free(l[i].stack);
			continue;
		}
		l[out++] = l[i];
	}
	qsort(l, out, sizeof(*l), cmp_value);
	*lines = l;
	*nlines = out;
	return 0;
}

int hs_folded__prefix(struct hs_folded_line *lines, size_t n, const char *frame)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = 0,
		       cap = strlen(frame) + strlen(lines[i].stack) + 2;
		char *buf = malloc(cap);

		if (!buf)
			return -ENOMEM;
		buf[0] = '\0';
		if (append(&buf, &len, &cap, frame, false) ||
		    append(&buf, &len, &cap, ";", true) ||
		    append(&buf, &len, &cap, lines[i].stack, true)) {
			free(buf);
			return -ENOMEM;
		}
		free(lines[i].stack);
		lines[i].stack = buf;
	}
	return 0;
}

void hs_folded__sort(struct hs_folded_line *lines, size_t n)
{
	qsort(lines, n, sizeof(*lines), cmp_value);
}

int hs_folded__write(FILE *f, const struct hs_folded_line *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fprintf(f, "%s %lld\n", lines[i].stack,
			    llround(lines[i].value)) < 0)
			return -EIO;
	return 0;
}

int hs_folded__write_file(const char *path, const struct hs_folded_line *lines,
			  size_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err;

	if (!f)
		return -ENOMEM;
	err = hs_folded__write(f, lines, n);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (!err)
		err = hs_write_file_atomic(path, text, len);
	free(text);
	return err;
}

void hs_folded__free(struct hs_folded_line *lines, size_t n)
{
	if (!lines)
		return;
	for (size_t i = 0; i < n; i++)
		free(lines[i].stack);
	free(lines);
}
