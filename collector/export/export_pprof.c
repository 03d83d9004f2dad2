// SPDX-License-Identifier: MIT
/*
 * export_pprof.c - aggregated stacks to a gzip'd pprof profile (through
 * common/pprof.c): Go's sample type names, period type space/bytes with
 * the sampling period, one mapping per mapped object (with its build id),
 * one location per return address, functions with file and line where
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

struct map_ent {
	uint64_t start, end, id;
};

struct exporter {
	struct pprof_builder *b;
	struct hs_syms *syms;
	struct map_ent *maps;
	size_t nmaps;
};

static uint64_t mapping_for(struct exporter *x, const struct hs_frame *f)
{
	struct map_ent *nm;
	uint64_t id;

	if (!f->module)
		return 0;
	for (size_t i = 0; i < x->nmaps; i++)
		if (x->maps[i].start == f->mod_start &&
		    x->maps[i].end == f->mod_end)
			return x->maps[i].id;
	id = pprof_add_mapping(x->b, f->mod_start, f->mod_end, 0, f->module,
			       f->build_id[0] ? f->build_id : NULL,
			       f->nlines > 0, f->nlines > 0 && f->file != NULL);
	nm = realloc(x->maps, (x->nmaps + 1) * sizeof(*nm));
	if (!nm)
		return id;
	x->maps = nm;
	nm[x->nmaps++] = (struct map_ent){f->mod_start, f->mod_end, id};
	return id;
}

static uint64_t location_for(struct exporter *x, uint64_t addr)
{
	/* Locations are keyed by the call site (return address - 1). */
	uint64_t pc = addr ? addr - 1 : 0, id = pprof_location_find(x->b, pc);
	struct pprof_line line = {0}, lines[HS_INLINE_MAX];
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
	/* One Line per inlined call, innermost first; none when the
	 * addresses are left for later symbolization (--symbolize=none). */
	if (!f.nlines && f.module)
		return pprof_location(x->b, mapping_for(x, &f), pc, NULL, 0);
	if (!f.nlines) {
		line.function_id = pprof_function_sys(x->b, f.function,
						      f.system_name, f.file);
		line.line = f.line;
		return pprof_location(x->b, 0, pc, &line, 1);
	}
	for (size_t k = 0; k < f.nlines && k < HS_INLINE_MAX; k++) {
		lines[k].function_id = pprof_function_sys(
			x->b, f.lines[k].function, f.lines[k].system_name,
			f.lines[k].file);
		lines[k].line = f.lines[k].line;
	}
	return pprof_location(x->b, mapping_for(x, &f), pc, lines,
			      f.nlines < HS_INLINE_MAX ? f.nlines
						       : HS_INLINE_MAX);
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
	if (!x.b)
		return -ENOMEM;
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
	err = pprof_encode(x.b, out, len);
out:
	free(x.maps);
	pprof_free(x.b);
	return err;
}
