// SPDX-License-Identifier: MIT
/*
 * export_pprof.c - aggregated stacks to a gzip'd pprof profile (through
 * common/pprof.c): Go's sample type names, period type space/bytes with
 * the sampling period, one mapping per executable segment as
 * /proc/PID/maps gives it (start, limit, file offset, the file's build id;
 * the main binary first, mapping id 1, as pprof expects), one location per
 * return address, functions with file and line where
 * libdwfl finds debug information, labels pid / nspid / comm / cgroup on
 * every sample, and the collector's notes (lost events, sampling cost) as
 * comments.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "pprof.h"

_Static_assert(HS_PPROF_MAX_TYPES == PPROF_MAX_VALUES,
	       "sample types a profile can have");

struct exporter {
	struct pprof_builder *b;
	struct hs_syms *syms;
	const struct hs_mapping *maps; /* hs_syms__mappings */
	size_t nmaps;
	uint64_t *map_id; /* per mapping: its pprof id, 0 = unused */
	bool *map_funcs;  /* per mapping: a location has a function */
	bool *map_lines;  /* per mapping: a location has a source line */
	long *by_id;	  /* pprof id - 1 -> mapping index */
	size_t nused;
};

/* The pprof mapping id of call site pc (0: none, or unused); notes
 * whether its location has a function and a source line (pprof leaves
 * mappings whose locations have neither for later symbolization). */
static uint64_t mapping_for(struct exporter *x, uint64_t pc, bool has_func,
			    bool has_line)
{
	long i = hs_syms__mapping_at(x->syms, pc);

	if (i < 0)
		return 0;
	x->map_funcs[i] |= has_func;
	x->map_lines[i] |= has_line;
	return x->map_id[i];
}

/* Give an id to every mapping a frame of aggs lies in, before any
 * location is made: the main binary's first (pprof reads mapping 1 as the
 * program), then the others by address. */
static int number_mappings(struct exporter *x, const struct hs_stack_agg *aggs,
			   size_t n)
{
	x->maps = hs_syms__mappings(x->syms, &x->nmaps);
	if (!x->nmaps)
		return 0;
	x->map_id = calloc(x->nmaps, sizeof(*x->map_id));
	x->map_funcs = calloc(x->nmaps, sizeof(*x->map_funcs));
	x->map_lines = calloc(x->nmaps, sizeof(*x->map_lines));
	x->by_id = calloc(x->nmaps, sizeof(*x->by_id));
	if (!x->map_id || !x->map_funcs || !x->map_lines || !x->by_id)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t depth = aggs[i].depth < HEAPSCOPE_MAX_FRAMES
					 ? aggs[i].depth
					 : HEAPSCOPE_MAX_FRAMES;

		for (uint32_t k = 0; k < depth; k++) {
			uint64_t addr = aggs[i].stack[k];
			long m;

			if (!addr || addr == HS_FREE_MARKER)
				continue;
			m = hs_syms__mapping_at(x->syms, addr - 1);
			if (m >= 0)
				x->map_id[m] = 1; /* used; numbered below */
		}
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t m = 0; m < x->nmaps; m++)
			if (x->map_id[m] && x->maps[m].main == !pass) {
				x->by_id[x->nused] = (long)m;
				x->map_id[m] = 0;
				x->nused++;
			}
	for (size_t k = 0; k < x->nused; k++)
		x->map_id[x->by_id[k]] = k + 1;
	return 0;
}

/* Add the numbered mappings, in id order (after the locations: only then
 * is it known which have source lines). */
static int add_mappings(struct exporter *x)
{
	for (size_t k = 0; k < x->nused; k++) {
		const struct hs_mapping *m = &x->maps[x->by_id[k]];
		uint64_t id = pprof_add_mapping(
			x->b, m->start, m->limit, m->offset, m->path,
			m->build_id[0] ? m->build_id : NULL,
			x->map_funcs[x->by_id[k]], x->map_lines[x->by_id[k]]);

		if (id != k + 1)
			return -ENOMEM;
	}
	return 0;
}

static uint64_t location_for(struct exporter *x, uint64_t addr)
{
	/* Locations are keyed by the call site (return address - 1). */
	uint64_t pc = addr ? addr - 1 : 0, id = pprof_location_find(x->b, pc);
	struct pprof_line line = {0};
	struct hs_frame f;

	if (id)
		return id;
	if (addr == HS_FREE_MARKER) {
		/* lifetime profiles: frames above this one free the object */
		line.function_id = pprof_function(x->b, "[free]", NULL);
		return pprof_location(x->b, 0, pc, &line, 1);
	}
	if (x->syms) {
		hs_syms__frame(x->syms, addr, &f);
	} else {
		memset(&f, 0, sizeof(f));
		f.function = "[unknown]";
	}
	line.function_id =
		pprof_function_sys(x->b, f.function, f.system_name, f.file);
	line.line = f.line;
	return pprof_location(x->b, mapping_for(x, pc, true, f.file != NULL),
			      pc, &line, 1);
}

int64_t hs_pprof__round(double v)
{
	return v > 9e18 ? INT64_MAX : (int64_t)llround(v);
}

int hs_pprof__build(const struct hs_stack_agg *aggs, size_t n,
		    struct hs_syms *syms, const struct hs_pprof_meta *m,
		    uint8_t **out, size_t *len)
{
	struct exporter x = {.syms = syms};
	struct pprof_label labels[5];
	uint64_t locs[HEAPSCOPE_MAX_FRAMES];
	size_t nl = 0;
	int err = -ENOMEM;

	x.b = pprof_new();
	if (!x.b || number_mappings(&x, aggs, n))
		goto out;
	if (m->ntypes) {
		for (size_t k = 0; k < m->ntypes; k++)
			pprof_add_sample_type(x.b, m->type_names[k],
					      m->type_units[k]);
		pprof_set_default_sample_type(x.b, m->type_names[0]);
	} else if (m->go_types) {
		pprof_add_sample_type(x.b, "alloc_objects", "count");
		pprof_add_sample_type(x.b, "alloc_space", "bytes");
		pprof_add_sample_type(x.b, "inuse_objects", "count");
		pprof_add_sample_type(x.b, "inuse_space", "bytes");
		pprof_set_default_sample_type(x.b, m->allocs ? "alloc_space"
							     : "inuse_space");
	} else if (m->allocs) {
		pprof_add_sample_type(x.b, "alloc_objects", "count");
		pprof_add_sample_type(x.b, "alloc_space", "bytes");
		pprof_set_default_sample_type(x.b, "alloc_space");
	} else {
		pprof_add_sample_type(x.b, "inuse_objects", "count");
		pprof_add_sample_type(x.b, "inuse_space", "bytes");
		pprof_set_default_sample_type(x.b, "inuse_space");
	}
	if (!m->ntypes) {
		pprof_add_sample_type(x.b,
				      m->allocs && !m->go_types
					      ? "alloc_requested_space"
					      : "inuse_requested_space",
				      "bytes");
		pprof_add_sample_type(x.b, "samples", "count");
	}
	if (m->residency && !m->ntypes && !m->go_types) {
		pprof_add_sample_type(x.b, "resident_space", "bytes");
		pprof_add_sample_type(x.b, "swapped_space", "bytes");
		pprof_add_sample_type(x.b, "not_resident_space", "bytes");
		pprof_add_sample_type(x.b, "huge_space", "bytes");
	}
	if (m->period > 0)
		pprof_set_period(x.b, "space", "bytes", m->period);
	else
		pprof_set_period(x.b, "space", "bytes", 0);
	pprof_set_time(x.b, m->time_nanos, m->duration_nanos);
	for (size_t i = 0; i < m->ncomments; i++)
		pprof_add_comment(x.b, m->comments[i]);

	labels[nl++] = (struct pprof_label){.key = "pid", .num = m->pid};
	if (m->nspid > 0 && m->nspid != m->pid)
		labels[nl++] =
			(struct pprof_label){.key = "nspid", .num = m->nspid};
	if (m->comm && *m->comm)
		labels[nl++] =
			(struct pprof_label){.key = "comm", .str = m->comm};
	if (m->cgroup && *m->cgroup)
		labels[nl++] =
			(struct pprof_label){.key = "cgroup", .str = m->cgroup};

	for (size_t i = 0; i < n; i++) {
		const struct hs_stack_agg *a = &aggs[i];
		int64_t vals[8] = {hs_pprof__round(a->objects),
				   hs_pprof__round(a->inuse),
				   hs_pprof__round(a->requested),
				   (int64_t)a->samples,
				   hs_pprof__round(a->resident),
				   hs_pprof__round(a->swapped),
				   hs_pprof__round(a->not_resident),
				   hs_pprof__round(a->huge)};
		uint32_t depth = a->depth;

		if (depth > HEAPSCOPE_MAX_FRAMES)
			depth = HEAPSCOPE_MAX_FRAMES;
		for (uint32_t k = 0; k < depth; k++)
			locs[k] = location_for(&x, a->stack[k]);
		if (m->go_types && !m->ntypes) {
			int64_t gv[6] = {hs_pprof__round(a->alloc_objects),
					 hs_pprof__round(a->alloc_space),
					 vals[0],
					 vals[1],
					 vals[2],
					 vals[3]};

			err = pprof_add_sample(x.b, locs, depth, gv, 6, labels,
					       nl);
		} else if (m->ntypes) {
			int64_t tv[HS_PPROF_MAX_TYPES] = {0};

			m->values(a, tv);
			err = pprof_add_sample(x.b, locs, depth, tv,
					       m->ntypes < HS_PPROF_MAX_TYPES
						       ? m->ntypes
						       : HS_PPROF_MAX_TYPES,
					       labels, nl);
		} else {
			err = pprof_add_sample(x.b, locs, depth, vals,
					       m->residency ? 8 : 4, labels,
					       nl);
		}
		if (err)
			goto out;
	}
	err = add_mappings(&x);
	if (!err)
		err = pprof_encode(x.b, out, len);
out:
	free(x.map_id);
	free(x.map_funcs);
	free(x.map_lines);
	free(x.by_id);
	if (x.b)
		pprof_free(x.b);
	return err;
}
