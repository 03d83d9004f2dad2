// SPDX-License-Identifier: MIT
/*
 * export_pprof.c - aggregated stacks to a gzip'd pprof profile (through
 * common/pprof.c): Go's sample type names, period type space/bytes with
 * the sampling period, one mapping per executable segment as
 * /proc/PID/maps gives it (start, limit, file offset, the file's build id;
 * the main binary first, as pprof expects), one location per return
 * address, functions with file and line where libdwfl finds debug
 * information, the process's labels on every sample (pid, nspid, comm,
 * exe, cgroup, container_id, systemd_unit), and the collector's notes
 * (lost events, sampling cost) as comments.  A profile may hold several
 * processes (the daemon's host profile): each is added with its own
 * labels, mappings and locations (hs_pprof__add); the first process's
 * program is mapping 1.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "pprof.h"

_Static_assert(HS_PPROF_MAX_TYPES == PPROF_MAX_VALUES,
	       "sample types a profile can have");

/* One profile being built; scope numbers the processes added (1, 2, ...):
 * mappings and locations belong to one scope, functions are shared.  The
 * per-mapping arrays are those of the scope being added. */
struct hs_pprof {
	struct pprof_builder *b;
	const struct hs_pprof_meta *m;
	struct hs_syms *syms;
	uint64_t scope;
	uint64_t base; /* mapping ids of earlier scopes: 1..base */
	const struct hs_mapping *maps; /* hs_syms__mappings */
	size_t nmaps;
	uint64_t *map_id; /* per mapping: its pprof id, 0 = unused */
	bool *map_funcs;  /* per mapping: a location has a function */
	bool *map_lines;  /* per mapping: a location has a source line */
	long *by_id;	  /* pprof id - base - 1 -> mapping index */
	size_t nused;
};

/* The pprof mapping id of call site pc (0: none, or unused); notes
 * whether its location has a function and a source line (pprof leaves
 * mappings whose locations have neither for later symbolization). */
static uint64_t mapping_for(struct hs_pprof *x, uint64_t pc, bool has_func,
			    bool has_line)
{
	long i = x->map_id ? hs_syms__mapping_at(x->syms, pc) : -1;

	if (i < 0)
		return 0;
	x->map_funcs[i] |= has_func;
	x->map_lines[i] |= has_line;
	return x->map_id[i];
}

/* Give an id to every mapping a frame of aggs lies in, before any
 * location is made: the main binary's first (pprof reads mapping 1 as the
 * program), then the others by address; ids follow those of the scopes
 * added before. */
static int number_mappings(struct hs_pprof *x, const struct hs_stack_agg *aggs,
			   size_t n)
{
	x->nused = 0;
	x->maps = x->syms ? hs_syms__mappings(x->syms, &x->nmaps) : NULL;
	if (!x->maps)
		x->nmaps = 0;
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
		x->map_id[x->by_id[k]] = x->base + k + 1;
	return 0;
}

/* Add the numbered mappings, in id order (after the locations: only then
 * is it known which have source lines). */
static int add_mappings(struct hs_pprof *x)
{
	for (size_t k = 0; k < x->nused; k++) {
		const struct hs_mapping *m = &x->maps[x->by_id[k]];
		uint64_t id = pprof_add_mapping(
			x->b, m->start, m->limit, m->offset, m->path,
			m->build_id[0] ? m->build_id : NULL,
			x->map_funcs[x->by_id[k]], x->map_lines[x->by_id[k]]);

		if (id != x->base + k + 1)
			return -ENOMEM;
	}
	x->base += x->nused;
	return 0;
}

static void free_mappings(struct hs_pprof *x)
{
	free(x->map_id);
	free(x->map_funcs);
	free(x->map_lines);
	free(x->by_id);
	x->map_id = NULL;
	x->map_funcs = x->map_lines = NULL;
	x->by_id = NULL;
	x->maps = NULL;
	x->nmaps = x->nused = 0;
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
		return pprof_location_in(x->b, x->scope,
					 mapping_for(x, pc, false, false), pc,
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
	return pprof_location_in(
		x->b, x->scope, mapping_for(x, pc, true, f.file != NULL), pc,
		lines, f.nlines < HS_INLINE_MAX ? f.nlines : HS_INLINE_MAX);
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
		{"comm", l->comm},	   {"exe", l->exe},
		{"cgroup", l->cgroup},	   {"container_id", l->container_id},
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
	err = number_mappings(x, aggs, n);
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
	if (!err)
		err = add_mappings(x);
	free_mappings(x);
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
	free_mappings(x);
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
