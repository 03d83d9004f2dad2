// SPDX-License-Identifier: MIT
/*
 * symbolize_offline.c - `heapscope symbolize`: a pprof profile whose
 * locations carry only addresses and mappings with build ids (recorded
 * with --symbolize=none) read back (common/pprof_decode.c), each mapping's
 * object found by its build id, every address symbolized with its inlined
 * calls (symbolize_inline.c), and the profile written again
 * (common/pprof.c) with everything else as it was.
 *
 * A mapping's object, the first that has its build id:
 *  1. the mapping's file name, if the file there is still that build;
 *  2. /usr/lib/debug/.build-id/xx/yyyy.debug, then .../xx/yyyy;
 *  3. the debuginfod servers of DEBUGINFOD_URLS (hs_debuginfod_find).
 * A stripped object from 1 gets its debug info as in a live process
 * (libdwfl's standard places and debuginfod).  A mapping without build id
 * is symbolized from its file name only.  Locations that have lines
 * already keep them.  The load bias comes from the mapping: the PT_LOAD
 * segment at its file offset (the executable one) is mapped at its start.
 */
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pprof.h"
#include "pprof_decode.h"
#include "symbolize_internal.h"

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = hs_syms__find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* Hex build id text to bytes; its length, 0 if not hex or too long. */
static int parse_build_id(const char *hex, unsigned char *bits)
{
	size_t len = strlen(hex);

	if (!len || len % 2 || len > 2 * HS_BUILD_ID_MAX)
		return 0;
	for (size_t i = 0; i < len / 2; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return 0;
		bits[i] = (unsigned char)v;
	}
	return (int)(len / 2);
}

/* fd of the ELF file at path when its build id is bits (n bytes; n 0:
 * any ELF file), else -1.  The load bias of mapping m into *bias. */
static int open_object(const char *path, const unsigned char *bits, int n,
		       const struct pprof_d_mapping *m, GElf_Addr *bias)
{
	const void *got = NULL;
	bool ok = false;
	size_t nph = 0;
	Elf *elf;
	int fd;

	fd = hs_open_regular(path);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF &&
	    (!n || (dwelf_elf_gnu_build_id(elf, &got) == n &&
		    !memcmp(got, bits, n))) &&
	    !elf_getphdrnum(elf, &nph)) {
		GElf_Ehdr eh;

		*bias = 0;
		ok = gelf_getehdr(elf, &eh) && eh.e_type == ET_EXEC;
		/* ET_DYN: the executable PT_LOAD at the mapping's (page)
		 * offset, else another there; in a debug file (p_offset
		 * not kept) the first executable one (mappings are the
		 * executable segments). */
		for (int pass = 0; !ok && pass < 3; pass++) {
			for (size_t i = 0; !ok && i < nph; i++) {
				GElf_Phdr ph;
				bool at = false;

				if (!gelf_getphdr(elf, (int)i, &ph) ||
				    ph.p_type != PT_LOAD)
					continue;
				at = (ph.p_offset & ~0xfffull) == m->offset;
				if (pass == 0 && !(at && (ph.p_flags & PF_X)))
					continue;
				if (pass == 1 && !(at && ph.p_filesz))
					continue;
				if (pass == 2 && !(ph.p_flags & PF_X))
					continue;
				*bias = m->start - (ph.p_vaddr & ~0xfffull);
				ok = true;
			}
		}
	}
	if (elf)
		elf_end(elf);
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

struct obj;

struct rewrite {
	const struct pprof_profile *p;
	struct pprof_builder *b;
	struct obj *objs; /* distinct objects found */
	size_t nobjs;
	uint64_t *map_ids;	 /* new id of mapping i, 0 = none */
	size_t *map_obj;	 /* its object (objs index), SIZE_MAX = none */
	GElf_Addr *map_bias;	 /* and its load bias */
	uint64_t *loc_ids;	 /* new id of location i */
	struct hs_chain **owned; /* chains the shared cache did not take */
	size_t nowned, capowned;
	struct idx *maps, *locs, *funcs; /* by id */
	struct hs_symbolize_stats *st;
};

/* One object found for the profile's mappings: its own Dwfl with the one
 * module, at load bias 0 (the mappings of several processes, a host
 * profile, overlap in address; each mapping keeps its own bias). */
struct obj {
	char *key; /* hex build id, else the file name */
	Dwfl *dwfl;
	Dwfl_Module *mod;
};

/* The object of mapping m (found as the file comment says) in *oi and its
 * load bias in *bias: 0, or -ENOENT when none is found, -ENOMEM. */
static int find_mapping(struct rewrite *w, const struct pprof_d_mapping *m,
			size_t *oi, GElf_Addr *bias)
{
	const struct pprof_profile *p = w->p;
	const char *name = pprof_d_str(p, m->filename), *file = name;
	const char *key = pprof_d_str(p, m->build_id);
	unsigned char bits[HS_BUILD_ID_MAX];
	char path[PATH_MAX], *dpath = NULL;
	int n = parse_build_id(key, bits), fd = -1, err = 0;
	struct obj *o;

	if (!n)
		key = name; /* no (valid) build id: by file name only */
	if (file[0] == '/')
		fd = open_object(file, bits, n, m, bias);
	for (int k = 0; fd < 0 && n && k < 2; k++) {
		int len = snprintf(path, sizeof(path),
				   "/usr/lib/debug/.build-id/%02x/", bits[0]);

		for (int i = 1; i < n; i++)
			len += snprintf(path + len, sizeof(path) - len, "%02x",
					bits[i]);
		snprintf(path + len, sizeof(path) - len, "%s",
			 k ? "" : ".debug");
		fd = open_object(path, bits, n, m, bias);
		file = fd >= 0 ? path : file;
	}
	if (fd < 0 && n) {
		int dfd = hs_debuginfod_find(bits, n, &dpath);

		if (dfd >= 0) {
			close(dfd);
			fd = open_object(dpath, bits, n, m, bias);
			file = dpath;
		}
	}
	if (fd < 0) {
		free(dpath);
		return -ENOENT;
	}
	for (*oi = 0; *oi < w->nobjs; (*oi)++) {
		if (!strcmp(w->objs[*oi].key, key)) {
			close(fd);
			free(dpath);
			return 0;
		}
	}
	o = realloc(w->objs, (w->nobjs + 1) * sizeof(*o));
	if (!o) {
		close(fd);
		free(dpath);
		return -ENOMEM;
	}
	w->objs = o;
	o = &w->objs[w->nobjs];
	o->key = strdup(key);
	o->dwfl = dwfl_begin(&offline_callbacks);
	o->mod = NULL;
	if (!o->key || !o->dwfl) {
		err = -ENOMEM;
		close(fd);
	} else {
		/* The module keeps the profile's file name; fd is libdwfl's
		 * now.  Bias 0: start = p_vaddr. */
		dwfl_report_begin(o->dwfl);
		o->mod = dwfl_report_elf(o->dwfl, name[0] ? name : file, file,
					 fd, 0, true);
		dwfl_report_end(o->dwfl, NULL, NULL);
		if (!o->mod) {
			close(fd);
			err = -ENOENT;
		}
	}
	free(dpath);
	if (err) {
		free(o->key);
		if (o->dwfl)
			dwfl_end(o->dwfl);
		return err;
	}
	*oi = w->nobjs++;
	return 0;
}

_Static_assert(offsetof(struct pprof_d_mapping, id) == 0 &&
		       offsetof(struct pprof_d_location, id) == 0 &&
		       offsetof(struct pprof_d_function, id) == 0,
	       "index_ids reads the id first");

/* An id -> index table, sorted by id (ids are any uint64 the profile
 * chose: looked up by binary search). */
struct idx {
	uint64_t id;
	size_t i;
};

static int cmp_idx(const void *a, const void *b)
{
	const struct idx *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The table of n elements of size bytes from base, whose id is the first
 * uint64_t of each; NULL on ENOMEM. */
static struct idx *index_ids(const void *base, size_t n, size_t size)
{
	struct idx *t = malloc((n + 1) * sizeof(*t));

	if (!t)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		memcpy(&t[i].id, (const char *)base + i * size,
		       sizeof(uint64_t));
		t[i].i = i;
	}
	qsort(t, n, sizeof(*t), cmp_idx);
	return t;
}

/* Index of id in t (n entries), or SIZE_MAX. */
static size_t find_id(const struct idx *t, size_t n, uint64_t id)
{
	struct idx key = {id, 0};
	const struct idx *e =
		id ? bsearch(&key, t, n, sizeof(*t), cmp_idx) : NULL;

	return e ? e->i : SIZE_MAX;
}

/* The chain of pc (bias removed) in object oi, through the shared
 * cache by build id (a host profile has many processes' libc); NULL when
 * there is no symbol for it (left for another symbolizer) or on ENOMEM. */
static const struct hs_chain *object_chain(struct rewrite *w, size_t oi,
					   Dwarf_Addr pc)
{
	Dwfl_Module *mod = w->objs[oi].mod;
	struct hs_chain *c, *shared;
	Dwarf_Addr start;
	uint64_t bid = module_bid(mod, &start);

	c = gcache_get(bid, pc - start);
	if (!c) {
		c = chain_new(mod, pc);
		shared = c ? gcache_put(bid, pc - start, c) : NULL;
		if (c && !shared) {
			/* not cached: freed at the end */
			if (w->nowned == w->capowned) {
				size_t ncap =
					w->capowned ? 2 * w->capowned : 64;
				struct hs_chain **no =
					realloc(w->owned, ncap * sizeof(*no));

				if (!no) {
					chain_free(c);
					return NULL;
				}
				w->owned = no;
				w->capowned = ncap;
			}
			w->owned[w->nowned++] = c;
		} else {
			c = shared;
		}
	}
	return c && !c->raw ? c : NULL;
}

/* The Lines of location l: from its object when found and l has no
 * Lines, or Lines without source lines (its mapping says so: an
 * in-process profile names functions from symbol tables only), else as
 * they were. */
static uint64_t location(struct rewrite *w, const struct pprof_d_location *l)
{
	const struct pprof_profile *p = w->p;
	struct pprof_line lines[HS_INLINE_MAX];
	size_t mi = find_id(w->maps, p->nmappings, l->mapping_id), n = 0;
	uint64_t mid = mi != SIZE_MAX ? w->map_ids[mi] : 0;
	const struct hs_chain *c = NULL;

	if (mi != SIZE_MAX && w->map_obj[mi] != SIZE_MAX &&
	    (!l->nlines || !p->mappings[mi].has_lines))
		c = object_chain(w, w->map_obj[mi],
				 l->address - w->map_bias[mi]);
	if (c) {
		w->st->locations_symbolized++;
		for (; n < c->n && n < HS_INLINE_MAX; n++) {
			lines[n].function_id = pprof_function_sys(
				w->b, c->l[n].function, c->l[n].system_name,
				c->l[n].file);
			lines[n].line = c->l[n].line;
		}
	}
	for (size_t k = 0; !c && k < l->nlines && k < HS_INLINE_MAX; k++) {
		size_t fi = find_id(w->funcs, p->nfunctions,
				    l->lines[k].function_id);
		const struct pprof_d_function *f;

		if (fi == SIZE_MAX)
			continue;
		f = &p->functions[fi];
		lines[n].function_id =
			pprof_function_sys(w->b, pprof_d_str(p, f->name),
					   pprof_d_str(p, f->system_name),
					   pprof_d_str(p, f->filename));
		lines[n++].line = l->lines[k].line;
	}
	/* scope: the mapping (a host profile's processes overlap) */
	return pprof_location_in(w->b, mid, mid, l->address, lines, n);
}

/* Samples, with their location ids mapped and their labels. */
static int samples(struct rewrite *w)
{
	const struct pprof_profile *p = w->p;
	struct pprof_label *labels = NULL;
	uint64_t *locs = NULL;
	int err = 0;

	for (size_t i = 0; !err && i < p->nsamples; i++) {
		const struct pprof_d_sample *s = &p->samples[i];
		void *nl = realloc(locs, (s->nlocs + 1) * sizeof(*locs));
		void *nlab =
			nl ? realloc(labels, (s->nlabels + 1) * sizeof(*labels))
			   : NULL;

		if (nl)
			locs = nl;
		if (!nl || !nlab) {
			err = -ENOMEM;
			break;
		}
		labels = nlab;
		for (size_t k = 0; k < s->nlocs; k++) {
			size_t j = find_id(w->locs, p->nlocations, s->locs[k]);

			locs[k] = j != SIZE_MAX ? w->loc_ids[j] : 0;
			if (!locs[k])
				err = -EINVAL; /* no such location */
		}
		for (size_t k = 0; k < s->nlabels; k++) {
			const struct pprof_d_label *l = &s->labels[k];

			labels[k] = (struct pprof_label){
				.key = pprof_d_str(p, l->key),
				.str = l->str ? pprof_d_str(p, l->str) : NULL,
				.num = l->num,
				.num_unit =
					l->num_unit
						? pprof_d_str(p, l->num_unit)
						: NULL};
		}
		if (!err)
			err = pprof_add_sample(w->b, locs, s->nlocs, s->values,
					       s->nvalues, labels, s->nlabels);
	}
	free(locs);
	free(labels);
	return err;
}

/* The profile's header fields, as they were. */
static int header(struct pprof_builder *b, const struct pprof_profile *p)
{
	int err = 0;

	if (p->nsample_types > PPROF_MAX_VALUES)
		return -E2BIG;
	for (size_t i = 0; !err && i < p->nsample_types; i++)
		err = pprof_add_sample_type(
			b, pprof_d_str(p, p->sample_types[i].type),
			pprof_d_str(p, p->sample_types[i].unit));
	if (!err && p->default_sample_type)
		err = pprof_set_default_sample_type(
			b, pprof_d_str(p, p->default_sample_type));
	if (!err)
		err = pprof_set_period(b, pprof_d_str(p, p->period_type.type),
				       pprof_d_str(p, p->period_type.unit),
				       p->period);
	pprof_set_time(b, p->time_nanos, p->duration_nanos);
	for (size_t i = 0; !err && i < p->ncomments; i++)
		err = pprof_add_comment(b, pprof_d_str(p, p->comments[i]));
	return err;
}

static int rewrite(struct rewrite *w, uint8_t **out, size_t *len)
{
	const struct pprof_profile *p = w->p;
	int err = header(w->b, p);

	for (size_t i = 0; !err && i < p->nmappings; i++) {
		const struct pprof_d_mapping *m = &p->mappings[i];
		int ferr = find_mapping(w, m, &w->map_obj[i], &w->map_bias[i]);
		bool found = !ferr;

		if (ferr == -ENOMEM)
			err = ferr;
		if (!found)
			w->map_obj[i] = SIZE_MAX;
		w->st->mappings++;
		w->st->mappings_found += found;
		w->map_ids[i] = pprof_add_mapping(
			w->b, m->start, m->limit, m->offset,
			pprof_d_str(p, m->filename),
			m->build_id ? pprof_d_str(p, m->build_id) : NULL,
			m->has_functions || found, m->has_lines || found);
		if (!w->map_ids[i])
			err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < p->nlocations; i++) {
		w->st->locations++;
		w->loc_ids[i] = location(w, &p->locations[i]);
		if (!w->loc_ids[i])
			err = -ENOMEM;
	}
	if (!err)
		err = samples(w);
	if (!err)
		err = pprof_encode(w->b, out, len);
	return err;
}

int hs_symbolize_pprof(const uint8_t *in, size_t len, uint8_t **out,
		       size_t *olen, struct hs_symbolize_stats *st)
{
	struct pprof_profile *p = NULL;
	struct rewrite w = {.st = st};
	int err;

	memset(st, 0, sizeof(*st));
	/* libelf is used (open_object) before any Dwfl exists */
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	err = pprof_decode(in, len, &p);
	if (err)
		return err;
	w.p = p;
	w.b = pprof_new();
	w.map_ids = calloc(p->nmappings + 1, sizeof(*w.map_ids));
	w.map_obj = calloc(p->nmappings + 1, sizeof(*w.map_obj));
	w.map_bias = calloc(p->nmappings + 1, sizeof(*w.map_bias));
	w.loc_ids = calloc(p->nlocations + 1, sizeof(*w.loc_ids));
	w.maps = index_ids(p->mappings, p->nmappings, sizeof(*p->mappings));
	w.locs = index_ids(p->locations, p->nlocations, sizeof(*p->locations));
	w.funcs = index_ids(p->functions, p->nfunctions, sizeof(*p->functions));
	if (!w.b || !w.map_ids || !w.map_obj || !w.map_bias || !w.loc_ids ||
	    !w.maps || !w.locs || !w.funcs)
		err = -ENOMEM;
	else
		err = rewrite(&w, out, olen);
	for (size_t i = 0; i < w.nobjs; i++) {
		dwfl_end(w.objs[i].dwfl);
		free(w.objs[i].key);
	}
	for (size_t i = 0; i < w.nowned; i++)
		chain_free(w.owned[i]);
	free(w.objs);
	free(w.owned);
	pprof_free(w.b);
	free(w.map_ids);
	free(w.map_obj);
	free(w.map_bias);
	free(w.loc_ids);
	free(w.maps);
	free(w.locs);
	free(w.funcs);
	pprof_profile_free(p);
	return err;
}
