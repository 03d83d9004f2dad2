// SPDX-License-Identifier: MIT
/*
 * export_pprof.c - aggregated stacks to a gzip'd pprof profile (through
 * common/pprof.c): Go's sample type names, period type space/bytes with
 * the sampling period, one mapping per mapped object (with its build id),
 * one location per return address, functions with file and line where
 * libdwfl finds debug information, the process's labels on every sample
 * (pid, nspid, comm, exe, cgroup, container_id, systemd_unit), and the
 * collector's notes (lost events, sampling cost) as comments.  A profile
 * may hold several processes (the daemon's host profile): each is added
 * with its own labels, mappings and locations (hs_pprof__add).
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
	uint64_t scope, start, end, id;
};

/* One profile being built; scope numbers the processes added (1, 2, ...):
 * mappings and locations belong to one scope, functions are shared. */
struct hs_pprof {
	struct pprof_builder *b;
	const struct hs_pprof_meta *m;
	struct hs_syms *syms;
	uint64_t scope;
	struct map_ent *maps;
	size_t nmaps;
};

static uint64_t mapping_for(struct hs_pprof *x, const struct hs_frame *f)
{
	struct map_ent *nm;
	uint64_t id;

	if (!f->module)
		return 0;
	for (size_t i = 0; i < x->nmaps; i++)
		if (x->maps[i].scope == x->scope &&
		    x->maps[i].start == f->mod_start &&
		    x->maps[i].end == f->mod_end)
			return x->maps[i].id;
	id = pprof_add_mapping(x->b, f->mod_start, f->mod_end, 0, f->module,
			       f->build_id[0] ? f->build_id : NULL,
			       f->nlines > 0, f->nlines > 0 && f->file != NULL);
	nm = realloc(x->maps, (x->nmaps + 1) * sizeof(*nm));
	if (!nm)
		return id;
	x->maps = nm;
	nm[x->nmaps++] =
		(struct map_ent){x->scope, f->mod_start, f->mod_end, id};
	return id;
}

static uint64_t location_for(struct hs_pprof *x, uint64_t addr)
{
	/* Locations are keyed by the call site (return address - 1) in the
	 * process's own address space (its scope). */
	uint64_t pc = addr ? addr - 1 : 0,
		 id = pprof_location_find_in(x->b, x->scope, pc);
	struct pprof_line line = {0}, lines[HS_INLINE_MAX];
	struct hs_frame f;

	if (id)
		return id;
	if (addr == HS_FREE_MARKER) {
		/* lifetime profiles: frames above this one free the object */
		line.function_id = pprof_function(x->b, "[free]", NULL);
		return pprof_location_in(x->b, x->scope, 0, pc, &line, 1);
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
		return pprof_location_in(x->b, x->scope, mapping_for(x, &f), pc,
					 NULL, 0);
	if (!f.nlines) {
		line.function_id = pprof_function_sys(x->b, f.function,
						      f.system_name, f.file);
		line.line = f.line;
		return pprof_location_in(x->b, x->scope, 0, pc, &line, 1);
	}
	for (size_t k = 0; k < f.nlines && k < HS_INLINE_MAX; k++) {
		lines[k].function_id = pprof_function_sys(
			x->b, f.lines[k].function, f.lines[k].system_name,
			f.lines[k].file);
		lines[k].line = f.lines[k].line;
	}
	return pprof_location_in(x->b, x->scope, mapping_for(x, &f), pc, lines,
				 f.nlines < HS_INLINE_MAX ? f.nlines
							  : HS_INLINE_MAX);
}

int64_t hs_pprof__round(double v)
{
	return v > 9e18 ? INT64_MAX : (int64_t)llround(v);
}

int hs_pprof__begin(const struct hs_pprof_meta *m, struct hs_pprof **out)
{
	struct hs_pprof *x = calloc(1, sizeof(*x));

	*out = NULL;
	if (!x)
		return -ENOMEM;
	x->m = m;
	x->b = pprof_new();
	if (!x->b) {
		free(x);
		return -ENOMEM;
	}
	if (m->ntypes) {
		for (size_t k = 0; k < m->ntypes; k++)
			pprof_add_sample_type(x->b, m->type_names[k],
					      m->type_units[k]);
		pprof_set_default_sample_type(x->b, m->type_names[0]);
	} else if (m->go_types) {
		pprof_add_sample_type(x->b, "alloc_objects", "count");
		pprof_add_sample_type(x->b, "alloc_space", "bytes");
		pprof_add_sample_type(x->b, "inuse_objects", "count");
		pprof_add_sample_type(x->b, "inuse_space", "bytes");
		pprof_set_default_sample_type(x->b, m->allocs ? "alloc_space"
							      : "inuse_space");
	} else if (m->allocs) {
		pprof_add_sample_type(x->b, "alloc_objects", "count");
		pprof_add_sample_type(x->b, "alloc_space", "bytes");
		pprof_set_default_sample_type(x->b, "alloc_space");
	} else {
		pprof_add_sample_type(x->b, "inuse_objects", "count");
		pprof_add_sample_type(x->b, "inuse_space", "bytes");
		pprof_set_default_sample_type(x->b, "inuse_space");
	}
	if (!m->ntypes) {
		pprof_add_sample_type(x->b,
				      m->allocs && !m->go_types
					      ? "alloc_requested_space"
					      : "inuse_requested_space",
				      "bytes");
		pprof_add_sample_type(x->b, "samples", "count");
	}
	if (m->residency && !m->ntypes && !m->go_types) {
		pprof_add_sample_type(x->b, "resident_space", "bytes");
		pprof_add_sample_type(x->b, "swapped_space", "bytes");
		pprof_add_sample_type(x->b, "not_resident_space", "bytes");
		pprof_add_sample_type(x->b, "huge_space", "bytes");
	}
	pprof_set_period(x->b, "space", "bytes", m->period > 0 ? m->period : 0);
	pprof_set_time(x->b, m->time_nanos, m->duration_nanos);
	for (size_t i = 0; i < m->ncomments; i++)
		pprof_add_comment(x->b, m->comments[i]);
	*out = x;
	return 0;
}

/* The labels of a process: pid as a string (what Pyroscope and Parca
 * group by) and as a number (what go tool pprof -tagfocus=pid=N
 * matches: a numeric value selects numeric labels), the rest strings. */
static size_t labels_of(const struct hs_pprof_meta *l,
			struct pprof_label out[HS_PPROF_MAX_LABELS], char *pid,
			size_t pid_size)
{
	const char *str[][2] = {
		{"comm", l->comm},
		{"exe", l->exe},
		{"cgroup", l->cgroup},
		{"container_id", l->container_id},
		{"systemd_unit", l->unit},
	};
	size_t n = 0;

	snprintf(pid, pid_size, "%d", (int)l->pid);
	out[n++] = (struct pprof_label){.key = "pid", .str = pid};
	out[n++] = (struct pprof_label){.key = "pid", .num = l->pid};
	if (l->nspid > 0 && l->nspid != l->pid)
		out[n++] =
			(struct pprof_label){.key = "nspid", .num = l->nspid};
	for (size_t i = 0; i < sizeof(str) / sizeof(str[0]); i++)
		if (str[i][1] && *str[i][1])
			out[n++] = (struct pprof_label){.key = str[i][0],
							.str = str[i][1]};
	return n;
}

int hs_pprof__add(struct hs_pprof *x, const struct hs_stack_agg *aggs, size_t n,
		  struct hs_syms *syms, const struct hs_pprof_meta *l)
{
	const struct hs_pprof_meta *m = x->m;
	struct pprof_label labels[HS_PPROF_MAX_LABELS];
	uint64_t locs[HEAPSCOPE_MAX_FRAMES];
	char pid[16];
	size_t nl = labels_of(l, labels, pid, sizeof(pid));
	int err = 0;

	x->syms = syms;
	x->scope++;
	for (size_t i = 0; i < n && !err; i++) {
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
			locs[k] = location_for(x, a->stack[k]);
		if (m->go_types && !m->ntypes) {
			int64_t gv[6] = {hs_pprof__round(a->alloc_objects),
					 hs_pprof__round(a->alloc_space),
					 vals[0],
					 vals[1],
					 vals[2],
					 vals[3]};

			err = pprof_add_sample(x->b, locs, depth, gv, 6, labels,
					       nl);
		} else if (m->ntypes) {
			int64_t tv[HS_PPROF_MAX_TYPES] = {0};

			m->values(a, tv);
			err = pprof_add_sample(x->b, locs, depth, tv,
					       m->ntypes < HS_PPROF_MAX_TYPES
						       ? m->ntypes
						       : HS_PPROF_MAX_TYPES,
					       labels, nl);
		} else {
			err = pprof_add_sample(x->b, locs, depth, vals,
					       m->residency ? 8 : 4, labels,
					       nl);
		}
	}
	x->syms = NULL;
	return err;
}

int hs_pprof__end(struct hs_pprof *x, uint8_t **out, size_t *len)
{
	int err = 0;

	if (!x)
		return 0;
	if (out)
		err = pprof_encode(x->b, out, len);
	free(x->maps);
	pprof_free(x->b);
	free(x);
	return err;
}

int hs_pprof__build(const struct hs_stack_agg *aggs, size_t n,
		    struct hs_syms *syms, const struct hs_pprof_meta *m,
		    uint8_t **out, size_t *len)
{
	struct hs_pprof *x;
	int err = hs_pprof__begin(m, &x);

	if (err)
		return err;
	err = hs_pprof__add(x, aggs, n, syms, m);
	if (err) {
		hs_pprof__end(x, NULL, NULL);
		return err;
	}
	return hs_pprof__end(x, out, len);
}
