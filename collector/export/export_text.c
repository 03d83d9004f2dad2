// SPDX-License-Identifier: MIT
/*
 * export_text.c - `--format text`: a short human top list of a profile,
 * the heaviest leaf functions (flat) and the heaviest stacks, from the
 * folded lines.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

#define TOP 20

struct leaf {
	const char *name; /* points into a folded line */
	size_t len;
	double value;
};

static int cmp_leaf(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;

	return x->value < y->value ? 1 : x->value > y->value ? -1 : 0;
}

int hs_text__write(FILE *f, const struct hs_folded_line *lines, size_t n,
		   enum hs_value v)
{
	struct leaf *leaves = calloc(n ? n : 1, sizeof(*leaves));
	size_t nleaves = 0;
	double total = 0;

	if (!leaves)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *s = strrchr(lines[i].stack, ';');
		size_t k;

		s = s ? s + 1 : lines[i].stack;
		total += lines[i].value;
		for (k = 0; k < nleaves; k++)
			if (leaves[k].len == strlen(s) &&
			    !memcmp(leaves[k].name, s, leaves[k].len))
				break;
		if (k == nleaves) {
			leaves[k].name = s;
			leaves[k].len = strlen(s);
			nleaves++;
		}
		leaves[k].value += lines[i].value;
	}
	qsort(leaves, nleaves, sizeof(*leaves), cmp_leaf);
	fprintf(f, "Total: %.0f %s in %zu stacks\n", total, hs_value_name(v),
		n);
	fprintf(f, "%14s %6s  %s\n", "flat", "flat%", "function (leaf)");
	for (size_t i = 0; i < nleaves && i < TOP; i++)
		fprintf(f, "%14.0f %5.1f%%  %.*s\n", leaves[i].value,
			total > 0 ? 100 * leaves[i].value / total : 0,
			(int)leaves[i].len, leaves[i].name);
	fprintf(f, "\nHeaviest stacks:\n");
	for (size_t i = 0; i < n && i < 5; i++)
		fprintf(f, "%14.0f %5.1f%%  %.400s\n", lines[i].value,
			total > 0 ? 100 * lines[i].value / total : 0,
			lines[i].stack);
	free(leaves);
	return ferror(f) ? -EIO : 0;
}
