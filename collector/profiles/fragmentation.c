// SPDX-License-Identifier: MIT
/*
 * fragmentation.c - the fragmentation profile: for small sampled objects,
 * the bytes that their proxies' spans cannot return to the OS.  The
 * attribution itself is common/fragmentation.c, shared with the
 * allocator's in-process profile.
 *
 * Each small sample holds a proxy object in a normal span S (abi.h record
 * extension: span start and bytes B_S, objects out of it n_S, capacity).
 * The span cannot be returned while n_S > 0; its unused bytes are
 * F_S = B_S - n_S * a (a = size-class size).  Two attributions per
 * sample i of estimated count c_i = W_i/(r_i + 1), age t_i:
 *
 *   proxy (the seed's method):  frag_i = c_i * F_S / n_S
 *       every live object of S carries an equal share of F_S.
 *   age-weighted:  frag_age_i = frag_i * t_i / t_class
 *       t_class = sum frag_j t_j / sum frag_j over the live samples of the
 *       same size class: old objects (the ones that outlive their
 *       neighbours and keep a span alive) carry more than young ones that
 *       come and go, and the class total equals the proxy method's (bytes
 *       move to older objects, none are made); see docs/profiles.md.
 *
 * The proxy counts itself in n_S (it occupies a slot, as the sampled
 * object would have).  Stale or missing span data (updated_ns == 0)
 * leave a sample out.  So do samples without a proxy: by default the
 * library gives proxies only to size classes up to one OS page
 * (HEAPSCOPE_PROXY_MAX=4096 in the target); larger samples contribute
 * nothing and are counted as not covered (hs_fragmentation__coverage).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "export.h"
#include "fragmentation.h"
#include "profiles.h"
#include "target.h"

struct cls {
	uint64_t a;
	struct hs_frag_class k;
};

static bool usable(const struct hs_sample *s)
{
	return s->proxy && s->pspan.updated_ns &&
	       hs_frag_usable(s->allocated, s->pspan.bytes, s->pspan.live,
			      s->pspan.objects);
}

/* The proxy method's bytes of a usable sample. */
static double frag_of(const struct hs_sample *s)
{
	return hs_frag_bytes(hs_sample_estimate(s, HS_VALUE_OBJECTS),
			     s->allocated, s->pspan.bytes, s->pspan.live);
}

static struct cls *cls_of(struct cls *c, size_t *nc, uint64_t a)
{
	for (size_t i = 0; i < *nc; i++)
		if (c[i].a == a)
			return &c[i];
	c[*nc].a = a;
	c[*nc].k = (struct hs_frag_class){0};
	return &c[(*nc)++];
}

int hs_fragmentation__aggregate(struct hs_profile *live,
				struct hs_stack_agg **out, size_t *n)
{
	struct hs_stack_table table = {0};
	struct hs_sample **ss;
	struct cls *cls;
	size_t ns, nc = 0;
	uint64_t now;
	int err;

	now = hs_mono_ns();
	err = hs_profile__samples(live, &ss, &ns);
	if (err)
		return err;
	cls = calloc(ns ? ns : 1, sizeof(*cls));
	if (!cls) {
		free(ss);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ns; i++) {
		const struct hs_sample *s = ss[i];

		if (!usable(s))
			continue;
		hs_frag_class_add(&cls_of(cls, &nc, s->allocated)->k, frag_of(s),
				  hs_frag_age(now, s->time_ns));
	}
	err = hs_profile__aggregate_into(live, &table);
	if (err) {
		hs_stack_table__free(&table);
		goto out;
	}
	/* Per stack, through the table of the aggregated stacks. */
	for (size_t i = 0; i < ns; i++) {
		const struct hs_sample *s = ss[i];
		struct hs_stack_agg *a;
		double frag;

		if (!usable(s))
			continue;
		a = hs_stack_table__find(&table, s->stack, s->depth);
		if (!a)
			continue;
		frag = frag_of(s);
		a->frag += frag;
		a->frag_age += hs_frag_age_bytes(&cls_of(cls, &nc, s->allocated)->k,
						 frag, hs_frag_age(now, s->time_ns));
	}
	err = hs_stack_table__take(&table, out, n);
out:
	free(cls);
	free(ss);
	return err;
}

void hs_fragmentation__coverage(struct hs_profile *p, uint64_t *covered,
				uint64_t *not_covered, double *covered_bytes,
				double *not_covered_bytes)
{
	uint64_t n[2] = { 0, 0 };
	double b[2] = { 0, 0 };
	struct hs_sample **ss;
	size_t ns;

	if (!hs_profile__samples(p, &ss, &ns)) {
		for (size_t i = 0; i < ns; i++) {
			int k = usable(ss[i]) ? 0 : 1;

			n[k]++;
			b[k] += hs_sample_estimate(ss[i], HS_VALUE_INUSE);
		}
		free(ss);
	}
	if (covered)
		*covered = n[0];
	if (not_covered)
		*not_covered = n[1];
	if (covered_bytes)
		*covered_bytes = b[0];
	if (not_covered_bytes)
		*not_covered_bytes = b[1];
}

static int cmp_ext(const void *a, const void *b)
{
	const struct heapscope_record_ext *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Plausible span data: 8 KiB pages, at most 1 GiB, live <= objects. */
static bool ext_valid(const struct heapscope_record_ext *e)
{
	return e->seq && e->proxy_span_bytes &&
	       !(e->proxy_span_bytes & 8191) &&
	       e->proxy_span_bytes <= (1ull << 30) &&
	       e->proxy_span_objects <= e->proxy_span_bytes &&
	       e->proxy_span_live <= e->proxy_span_objects;
}

int hs_fragmentation__read(struct hs_profile *p, pid_t pid, uint64_t reg_addr)
{
	const size_t chunk = 4096; /* entries per process_vm_readv */
	struct heapscope_record_ext *ext;
	struct heapscope_registry h;
	struct hs_sample **ss;
	size_t ns, n = 0;
	uint64_t hw;
	int err;

	err = hs_registry__read_header(pid, reg_addr, &h);
	if (err)
		return err;
	if (!h.ext_records || h.ext_size != sizeof(*ext))
		return -ENOTSUP; /* a library without the record extension */
	hw = h.high_water;
	if (hw > h.capacity || hw > HS_REGISTRY_MAX_CAPACITY)
		return -EBADMSG;
	ext = malloc((hw ? hw : 1) * sizeof(*ext));
	if (!ext)
		return -ENOMEM;
	for (uint64_t i = 0; i < hw; i += chunk) {
		size_t k = hw - i < chunk ? (size_t)(hw - i) : chunk;

		err = hs_registry__read_process(&pid,
						h.ext_records + i * sizeof(*ext),
						ext + i, k * sizeof(*ext));
		if (err)
			goto out;
	}
	for (uint64_t i = 0; i < hw; i++)
		if (ext_valid(&ext[i]))
			ext[n++] = ext[i];
	qsort(ext, n, sizeof(*ext), cmp_ext);
	err = hs_profile__samples(p, &ss, &ns);
	if (err)
		goto out;
	for (size_t i = 0; i < ns; i++) {
		struct heapscope_record_ext key = {.seq = ss[i]->seq};
		const struct heapscope_record_ext *e =
			bsearch(&key, ext, n, sizeof(*ext), cmp_ext);

		memset(&ss[i]->pspan, 0, sizeof(ss[i]->pspan));
		if (!e)
			continue;
		ss[i]->proxy = 1; /* known to have one */
		ss[i]->pspan.start = e->proxy_span_start;
		ss[i]->pspan.bytes = e->proxy_span_bytes;
		ss[i]->pspan.live = e->proxy_span_live;
		ss[i]->pspan.objects = e->proxy_span_objects;
		ss[i]->pspan.updated_ns = e->updated_ns;
	}
	free(ss);
out:
	free(ext);
	return err;
}

static const char *const fr_names[] = {
	"fragmentation_space", "fragmentation_age_space", "inuse_objects",
	"inuse_space", "samples",
};
static const char *const fr_units[] = {
	"bytes", "bytes", "count", "bytes", "count",
};

static void fr_values(const struct hs_stack_agg *a, int64_t *v)
{
	v[0] = hs_pprof__round(a->frag);
	v[1] = hs_pprof__round(a->frag_age);
	v[2] = hs_pprof__round(a->objects);
	v[3] = hs_pprof__round(a->inuse);
	v[4] = (int64_t)a->samples;
}

void hs_fragmentation__pprof(struct hs_pprof_meta *m)
{
	_Static_assert(sizeof(fr_names) == sizeof(fr_units) &&
			       sizeof(fr_names) / sizeof(fr_names[0]) <= HS_PPROF_MAX_TYPES,
		       "a unit per sample type");
	m->ntypes = sizeof(fr_names) / sizeof(fr_names[0]);
	m->type_names = fr_names;
	m->type_units = fr_units;
	m->values = fr_values;
}
