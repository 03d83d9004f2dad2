// SPDX-License-Identifier: MIT
/*
 * pprof.c - the profile.proto builder: sample types, period, interning
 * tables for strings, functions and locations, samples, and the encoding
 * of all of it through the wire writer (pprof_wire.c, which also gzips).
 * Field numbers follow github.com/google/pprof/proto/profile.proto.
 *
 * Messages are encoded as they are added (samples, mappings, functions,
 * locations each go to their own buffer); pprof_encode_raw concatenates
 * them with the scalar fields and the string table.  Repeated fields of a
 * message may appear in any order on the wire, so this is a valid
 * encoding.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pprof.h"
#include "pprof_wire.h"

/* profile.proto field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1,
	VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

/* ------------------------------------------------------------ interning */

/* Open-addressing table from a 64-bit hash/key pair to an id. */
struct itab {
	struct ient {
		uint64_t key;
		uint64_t id; /* 0 = empty */
	} *e;
	size_t cap, used;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

static int itab_grow(struct itab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 256;
	struct ient *ne = calloc(ncap, sizeof(*ne));

	if (!ne)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->e[i].id)
			continue;
		for (j = mix(t->e[i].key) & (ncap - 1); ne[j].id;
		     j = (j + 1) & (ncap - 1))
			;
		ne[j] = t->e[i];
	}
	free(t->e);
	t->e = ne;
	t->cap = ncap;
	return 0;
}

/* Visit candidates with the key; eq decides equality for colliding hashes. */
typedef bool (*ieq_fn)(const void *ctx, uint64_t id);

static struct ient *itab_find(const struct itab *t, uint64_t key, ieq_fn eq,
			      const void *ctx)
{
	if (!t->cap)
		return NULL;
	for (size_t i = mix(key) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (!t->e[i].id)
			return &t->e[i];
		if (t->e[i].key == key && (!eq || eq(ctx, t->e[i].id)))
			return &t->e[i];
	}
}

static int itab_put(struct itab *t, uint64_t key, uint64_t id, ieq_fn eq,
		    const void *ctx)
{
	struct ient *e;

	if ((t->used + 1) * 4 > t->cap * 3 && itab_grow(t))
		return -ENOMEM;
	e = itab_find(t, key, eq, ctx);
	e->key = key;
	e->id = id;
	t->used++;
	return 0;
}

/* ------------------------------------------------------------ builder */

struct func_key {
	uint64_t name, sys, file; /* string indices (sys: system_name) */
};

struct pprof_builder {
	char **strs; /* string table; strs[0] = "" */
	size_t nstrs, capstrs;
	struct itab strtab; /* id = index + 1 */

	struct func_key *funcs; /* funcs[id - 1] */
	size_t nfuncs, capfuncs;
	struct itab functab;

	uint64_t nlocs;
	/* key = hash of (scope, address); lockeys[id - 1] the exact pair */
	struct itab loctab;
	struct loc_key {
		uint64_t scope, address;
	} *lockeys;
	size_t caplocs;
	uint64_t nmaps;

	uint64_t types[PPROF_MAX_VALUES][2];
	size_t ntypes;
	uint64_t period_type[2];
	int64_t period;
	uint64_t default_type;
	int64_t time_nanos, duration_nanos;
	uint64_t *comments;
	size_t ncomments;

	struct pprof_buf samples, mappings, locations, functions, m1, m2;
	bool oom;
};

struct str_ctx {
	const struct pprof_builder *b;
	const char *s;
};

static bool str_eq(const void *ctx, uint64_t id)
{
	const struct str_ctx *c = ctx;

	return !strcmp(c->b->strs[id - 1], c->s);
}

/* Index of s in the string table (added if new); 0 for NULL or "". */
static uint64_t str_index(struct pprof_builder *b, const char *s)
{
	struct str_ctx c = {b, s};
	struct ient *e;
	uint64_t h;
	char *dup;

	if (!s || !*s)
		return 0;
	h = hash_str(s);
	e = itab_find(&b->strtab, h, str_eq, &c);
	if (e && e->id)
		return e->id - 1;
	if (b->nstrs == b->capstrs) {
		size_t ncap = b->capstrs * 2;
		char **ns = realloc(b->strs, ncap * sizeof(*ns));

		if (!ns)
			goto oom;
		b->strs = ns;
		b->capstrs = ncap;
	}
	dup = strdup(s);
	if (!dup)
		goto oom;
	b->strs[b->nstrs] = dup;
	if (itab_put(&b->strtab, h, b->nstrs + 1, str_eq, &c)) {
		free(dup);
		goto oom;
	}
	return b->nstrs++;
oom:
	b->oom = true;
	return 0;
}

struct pprof_builder *pprof_new(void)
{
	struct pprof_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->capstrs = 64;
	b->strs = calloc(b->capstrs, sizeof(*b->strs));
	if (!b->strs || !(b->strs[0] = strdup(""))) {
		pprof_free(b);
		return NULL;
	}
	b->nstrs = 1;
	return b;
}

void pprof_free(struct pprof_builder *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nstrs; i++)
		free(b->strs[i]);
	free(b->strs);
	free(b->strtab.e);
	free(b->funcs);
	free(b->functab.e);
	free(b->loctab.e);
	free(b->lockeys);
	free(b->comments);
	free(b->samples.p);
	free(b->mappings.p);
	free(b->locations.p);
	free(b->functions.p);
	free(b->m1.p);
	free(b->m2.p);
	free(b);
}

int pprof_add_sample_type(struct pprof_builder *b, const char *type,
			  const char *unit)
{
	if (!type || b->ntypes >= PPROF_MAX_VALUES || b->samples.len)
		return -EINVAL;
	b->types[b->ntypes][0] = str_index(b, type);
	b->types[b->ntypes][1] = str_index(b, unit);
	b->ntypes++;
	return b->oom ? -ENOMEM : 0;
}

int pprof_set_default_sample_type(struct pprof_builder *b, const char *type)
{
	b->default_type = str_index(b, type);
	return b->oom ? -ENOMEM : 0;
}

int pprof_set_period(struct pprof_builder *b, const char *type,
		     const char *unit, int64_t period)
{
	b->period_type[0] = str_index(b, type);
	b->period_type[1] = str_index(b, unit);
	b->period = period;
	return b->oom ? -ENOMEM : 0;
}

void pprof_set_time(struct pprof_builder *b, int64_t time_nanos,
		    int64_t duration_nanos)
{
	b->time_nanos = time_nanos;
	b->duration_nanos = duration_nanos;
}

int pprof_add_comment(struct pprof_builder *b, const char *text)
{
	uint64_t *nc = realloc(b->comments, (b->ncomments + 1) * sizeof(*nc));

	if (!nc)
		return -ENOMEM;
	b->comments = nc;
	nc[b->ncomments++] = str_index(b, text);
	return b->oom ? -ENOMEM : 0;
}

uint64_t pprof_add_mapping(struct pprof_builder *b, uint64_t start,
			   uint64_t limit, uint64_t offset,
			   const char *filename, const char *build_id,
			   int has_functions, int has_lines)
{
	struct pprof_buf *m = &b->m1;
	uint64_t id = ++b->nmaps;

	pprof_put_uint(m, MAPPING_ID, id);
	pprof_put_uint(m, MAPPING_MEMORY_START, start);
	pprof_put_uint(m, MAPPING_MEMORY_LIMIT, limit);
	pprof_put_uint(m, MAPPING_FILE_OFFSET, offset);
	pprof_put_uint(m, MAPPING_FILENAME, str_index(b, filename));
	pprof_put_uint(m, MAPPING_BUILD_ID, str_index(b, build_id));
	pprof_put_uint(m, MAPPING_HAS_FUNCTIONS, !!has_functions);
	pprof_put_uint(m, MAPPING_HAS_FILENAMES, !!has_lines);
	pprof_put_uint(m, MAPPING_HAS_LINE_NUMBERS, !!has_lines);
	pprof_put_msg(&b->mappings, PROFILE_MAPPING, m);
	if (b->mappings.oom || b->oom) {
		b->oom = true;
		return 0;
	}
	return id;
}

static bool func_eq(const void *ctx, uint64_t id)
{
	const struct pprof_builder *b = ((const void **)ctx)[0];
	const struct func_key *k = ((const void **)ctx)[1];

	return b->funcs[id - 1].name == k->name &&
	       b->funcs[id - 1].sys == k->sys &&
	       b->funcs[id - 1].file == k->file;
}

uint64_t pprof_function(struct pprof_builder *b, const char *name,
			const char *filename)
{
	return pprof_function_sys(b, name, name, filename);
}

uint64_t pprof_function_sys(struct pprof_builder *b, const char *name,
			    const char *system_name, const char *filename)
{
	struct func_key k = {str_index(b, name),
			     str_index(b, system_name ? system_name : name),
			     str_index(b, filename)};
	const void *ctx[2] = {b, &k};
	uint64_t h = mix(k.name) ^ mix(k.sys + 1) ^
		     (k.file * 0x9e3779b97f4a7c15ULL);
	uint64_t id;
	struct pprof_buf *m = &b->m1;
	struct ient *e;

	if (b->oom)
		return 0;
	e = itab_find(&b->functab, h, func_eq, ctx);
	if (e && e->id)
		return e->id;
	if (b->nfuncs == b->capfuncs) {
		size_t ncap = b->capfuncs ? b->capfuncs * 2 : 64;
		struct func_key *nf = realloc(b->funcs, ncap * sizeof(*nf));

		if (!nf)
			goto oom;
		b->funcs = nf;
		b->capfuncs = ncap;
	}
	b->funcs[b->nfuncs] = k;
	id = b->nfuncs + 1;
	if (itab_put(&b->functab, h, id, func_eq, ctx))
		goto oom;
	b->nfuncs++;
	pprof_put_uint(m, FUNCTION_ID, id);
	pprof_put_uint(m, FUNCTION_NAME, k.name);
	pprof_put_uint(m, FUNCTION_SYSTEM_NAME, k.sys);
	pprof_put_uint(m, FUNCTION_FILENAME, k.file);
	pprof_put_msg(&b->functions, PROFILE_FUNCTION, m);
	if (b->functions.oom)
		goto oom;
	return id;
oom:
	b->oom = true;
	return 0;
}

struct loc_ctx {
	const struct pprof_builder *b;
	struct loc_key k;
};

static bool loc_eq(const void *ctx, uint64_t id)
{
	const struct loc_ctx *c = ctx;
	const struct loc_key *k = &c->b->lockeys[id - 1];

	return k->scope == c->k.scope && k->address == c->k.address;
}

static uint64_t loc_hash(uint64_t scope, uint64_t address)
{
	return address ^ mix(scope + 0x9e3779b97f4a7c15ULL);
}

uint64_t pprof_location_find_in(const struct pprof_builder *b, uint64_t scope,
				uint64_t address)
{
	struct loc_ctx c = {b, {scope, address}};
	struct ient *e =
		itab_find(&b->loctab, loc_hash(scope, address), loc_eq, &c);

	return e ? e->id : 0;
}

uint64_t pprof_location_find(const struct pprof_builder *b, uint64_t address)
{
	return pprof_location_find_in(b, 0, address);
}

uint64_t pprof_location_in(struct pprof_builder *b, uint64_t scope,
			   uint64_t mapping_id, uint64_t address,
			   const struct pprof_line *lines, size_t n)
{
	struct pprof_buf *m = &b->m1, *l = &b->m2;
	uint64_t id = pprof_location_find_in(b, scope, address);
	struct loc_ctx c = {b, {scope, address}};

	if (id)
		return id;
	if (b->oom)
		return 0;
	id = b->nlocs + 1;
	if (b->nlocs == b->caplocs) {
		size_t ncap = b->caplocs ? b->caplocs * 2 : 256;
		struct loc_key *nk = realloc(b->lockeys, ncap * sizeof(*nk));

		if (!nk) {
			b->oom = true;
			return 0;
		}
		b->lockeys = nk;
		b->caplocs = ncap;
	}
	b->lockeys[b->nlocs] = c.k;
	if (itab_put(&b->loctab, loc_hash(scope, address), id, loc_eq, &c)) {
		b->oom = true;
		return 0;
	}
	b->nlocs++;
	pprof_put_uint(m, LOCATION_ID, id);
	pprof_put_uint(m, LOCATION_MAPPING_ID, mapping_id);
	pprof_put_uint(m, LOCATION_ADDRESS, address);
	for (size_t i = 0; i < n; i++) {
		pprof_put_uint(l, LINE_FUNCTION_ID, lines[i].function_id);
		pprof_put_uint(l, LINE_LINE, (uint64_t)lines[i].line);
		pprof_put_msg(m, LOCATION_LINE, l);
	}
	pprof_put_msg(&b->locations, PROFILE_LOCATION, m);
	if (b->locations.oom) {
		b->oom = true;
		return 0;
	}
	return id;
}

uint64_t pprof_location(struct pprof_builder *b, uint64_t mapping_id,
			uint64_t address, const struct pprof_line *lines,
			size_t n)
{
	return pprof_location_in(b, 0, mapping_id, address, lines, n);
}

int pprof_add_sample(struct pprof_builder *b, const uint64_t *locs,
		     size_t nlocs, const int64_t *values, size_t nvalues,
		     const struct pprof_label *labels, size_t nlabels)
{
	struct pprof_buf *m = &b->m1, *l = &b->m2;

	if (nvalues != b->ntypes)
		return -EINVAL;
	/* Packed repeated fields: one length-delimited run of varints. */
	for (size_t i = 0; i < nlocs; i++)
		pprof_put_varint(l, locs[i]);
	if (nlocs)
		pprof_put_msg(m, SAMPLE_LOCATION_ID, l);
	for (size_t i = 0; i < nvalues; i++)
		pprof_put_varint(l, (uint64_t)values[i]);
	if (nvalues)
		pprof_put_msg(m, SAMPLE_VALUE, l);
	for (size_t i = 0; i < nlabels; i++) {
		pprof_put_uint(l, LABEL_KEY, str_index(b, labels[i].key));
		if (labels[i].str) {
			pprof_put_uint(l, LABEL_STR, str_index(b, labels[i].str));
		} else {
			pprof_put_uint(l, LABEL_NUM, (uint64_t)labels[i].num);
			pprof_put_uint(l, LABEL_NUM_UNIT,
				 str_index(b, labels[i].num_unit));
		}
		pprof_put_msg(m, SAMPLE_LABEL, l);
	}
	pprof_put_msg(&b->samples, PROFILE_SAMPLE, m);
	if (b->samples.oom || b->oom) {
		b->oom = true;
		return -ENOMEM;
	}
	return 0;
}

static void put_value_type(struct pprof_buf *out, struct pprof_buf *m, unsigned field,
			   const uint64_t t[2])
{
	pprof_put_uint(m, VALUETYPE_TYPE, t[0]);
	pprof_put_uint(m, VALUETYPE_UNIT, t[1]);
	pprof_put_msg(out, field, m);
}

int pprof_encode_raw(struct pprof_builder *b, uint8_t **out, size_t *len)
{
	struct pprof_buf o = {0};

	if (b->oom)
		return -ENOMEM;
	for (size_t i = 0; i < b->ntypes; i++)
		put_value_type(&o, &b->m1, PROFILE_SAMPLE_TYPE, b->types[i]);
	pprof_put_bytes(&o, b->samples.p, b->samples.len);
	pprof_put_bytes(&o, b->mappings.p, b->mappings.len);
	pprof_put_bytes(&o, b->locations.p, b->locations.len);
	pprof_put_bytes(&o, b->functions.p, b->functions.len);
	for (size_t i = 0; i < b->nstrs; i++)
		pprof_put_len(&o, PROFILE_STRING_TABLE, b->strs[i],
			strlen(b->strs[i]));
	pprof_put_uint(&o, PROFILE_TIME_NANOS, (uint64_t)b->time_nanos);
	pprof_put_uint(&o, PROFILE_DURATION_NANOS, (uint64_t)b->duration_nanos);
	if (b->period_type[0] || b->period_type[1])
		put_value_type(&o, &b->m1, PROFILE_PERIOD_TYPE, b->period_type);
	pprof_put_uint(&o, PROFILE_PERIOD, (uint64_t)b->period);
	for (size_t i = 0; i < b->ncomments; i++) {
		/* An index may be 0 (""), so not through put_uint. */
		pprof_put_key(&o, PROFILE_COMMENT, PPROF_WIRE_VARINT);
		pprof_put_varint(&o, b->comments[i]);
	}
	pprof_put_uint(&o, PROFILE_DEFAULT_SAMPLE_TYPE, b->default_type);
	if (o.oom || b->m1.oom) {
		free(o.p);
		return -ENOMEM;
	}
	*out = o.p ? o.p : malloc(1);
	*len = o.len;
	return *out ? 0 : -ENOMEM;
}

int pprof_encode(struct pprof_builder *b, uint8_t **out, size_t *len)
{
	uint8_t *raw;
	size_t rlen;
	int err = pprof_encode_raw(b, &raw, &rlen);

	if (err)
		return err;
	err = pprof_gzip(raw, rlen, out, len);
	free(raw);
	return err;
}
