// SPDX-License-Identifier: MIT
/*
 * pprof_decode.c - profile.proto read back: gunzip (zlib, bounded by
 * PPROF_DECODE_MAX), then the protobuf wire format, one parser per
 * message, every length and varint checked against the bytes there are.
 * Field numbers follow github.com/google/pprof/proto/profile.proto (the
 * same as pprof.c's).  Repeated scalars are read packed or not, as
 * protobuf allows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof_decode.h"

struct rd {
	const uint8_t *p, *end;
};

enum { W_VARINT = 0, W_I64 = 1, W_LEN = 2, W_I32 = 5 };

static int varint(struct rd *r, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 70; shift += 7) {
		uint8_t b;

		if (r->p >= r->end)
			return -EINVAL;
		b = *r->p++;
		if (shift == 63 && b > 1)
			return -EINVAL; /* more than 64 bits */
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EINVAL;
}

static int key(struct rd *r, unsigned *field, unsigned *wire)
{
	uint64_t k;

	if (varint(r, &k) || (k >> 3) == 0 || (k >> 3) > 0x1fffffff)
		return -EINVAL;
	*field = (unsigned)(k >> 3);
	*wire = (unsigned)(k & 7);
	return 0;
}

/* The bytes of a length-delimited field into *sub. */
static int sub(struct rd *r, struct rd *s)
{
	uint64_t n;

	if (varint(r, &n) || n > (uint64_t)(r->end - r->p))
		return -EINVAL;
	s->p = r->p;
	s->end = r->p + n;
	r->p += n;
	return 0;
}

static int skip(struct rd *r, unsigned wire)
{
	struct rd s;
	uint64_t v;

	switch (wire) {
	case W_VARINT:
		return varint(r, &v);
	case W_LEN:
		return sub(r, &s);
	case W_I64:
	case W_I32: {
		size_t n = wire == W_I64 ? 8 : 4;

		if ((size_t)(r->end - r->p) < n)
			return -EINVAL;
		r->p += n;
		return 0;
	}
	}
	return -EINVAL;
}

/* A scalar field: must be a varint. */
static int scalar(struct rd *r, unsigned wire, uint64_t *v)
{
	return wire == W_VARINT ? varint(r, v) : -EINVAL;
}

static int sint(struct rd *r, unsigned wire, int64_t *v)
{
	uint64_t u = 0;
	int err = scalar(r, wire, &u);

	*v = (int64_t)u;
	return err;
}

/* Room for one more element of size bytes in *arr holding n; the new
 * element zeroed.  Capacity doubles at powers of two (from 4). */
static void *more(void *arr, size_t n, size_t size)
{
	void **a = arr;
	char *p;

	if (n == 0 || (n >= 4 && !(n & (n - 1)))) {
		size_t cap = n ? 2 * n : 4;
		void *na;

		if (cap > SIZE_MAX / size)
			return NULL;
		na = realloc(*a, cap * size);
		if (!na)
			return NULL;
		*a = na;
	}
	p = (char *)*a + n * size;
	memset(p, 0, size);
	return p;
}

/* Append a repeated uint64 field, packed (W_LEN) or not. */
static int repeated(struct rd *r, unsigned wire, void *arr, size_t *n)
{
	struct rd s;
	uint64_t v, *slot;

	if (wire == W_VARINT) {
		if (varint(r, &v))
			return -EINVAL;
		if (!(slot = more(arr, *n, sizeof(v))))
			return -ENOMEM;
		*slot = v;
		(*n)++;
		return 0;
	}
	if (wire != W_LEN || sub(r, &s))
		return -EINVAL;
	while (s.p < s.end) {
		if (varint(&s, &v))
			return -EINVAL;
		if (!(slot = more(arr, *n, sizeof(v))))
			return -ENOMEM;
		*slot = v;
		(*n)++;
	}
	return 0;
}

/* Loop over the fields of message r: each to fn(ctx, r, field, wire). */
typedef int (*field_fn)(void *ctx, struct rd *r, unsigned field, unsigned wire);

static int message(struct rd *r, field_fn fn, void *ctx)
{
	while (r->p < r->end) {
		unsigned field, wire;
		int err = key(r, &field, &wire);

		if (!err)
			err = fn(ctx, r, field, wire);
		if (err)
			return err;
	}
	return 0;
}

/* A length-delimited sub-message of r parsed with fn. */
static int nested(struct rd *r, unsigned wire, field_fn fn, void *ctx)
{
	struct rd s;

	if (wire != W_LEN || sub(r, &s))
		return -EINVAL;
	return message(&s, fn, ctx);
}

/* Append a zeroed element of size bytes to the array *arr of *n and
 * parse it from r with fn. */
static int add_nested(struct rd *r, unsigned w, void *arr, size_t *n,
		      size_t size, field_fn fn)
{
	void *e = more(arr, *n, size);

	if (!e)
		return -ENOMEM;
	(*n)++;
	return nested(r, w, fn, e);
}

static int f_value_type(void *ctx, struct rd *r, unsigned f, unsigned w)
{
	struct pprof_d_value_type *vt = ctx;

	if (f == 1)
		return sint(r, w, &vt->type);
	if (f == 2)
		return sint(r, w, &vt->unit);
	return skip(r, w);
}

static int f_label(void *ctx, struct rd *r, unsigned f, unsigned w)
{
	struct pprof_d_label *l = ctx;

	switch (f) {
	case 1:
		return sint(r, w, &l->key);
	case 2:
		return sint(r, w, &l->str);
	case 3:
		return sint(r, w, &l->num);
	case 4:
		return sint(r, w, &l->num_unit);
	}
	return skip(r, w);
}

static int f_sample(void *ctx, struct rd *r, unsigned f, unsigned w)
{
	struct pprof_d_sample *s = ctx;

	switch (f) {
	case 1:
		return repeated(r, w, &s->locs, &s->nlocs);
	case 2:
		return repeated(r, w, &s->values, &s->nvalues);
	case 3:
		return add_nested(r, w, &s->labels, &s->nlabels,
				  sizeof(*s->labels), f_label);
	}
	return skip(r, w);
}

static int f_mapping(void *ctx, struct rd *r, unsigned f, unsigned w)
{
	struct pprof_d_mapping *m = ctx;
	uint64_t v = 0;
	int err;

	switch (f) {
	case 1:
		return scalar(r, w, &m->id);
	case 2:
		return scalar(r, w, &m->start);
	case 3:
		return scalar(r, w, &m->limit);
	case 4:
		return scalar(r, w, &m->offset);
	case 5:
		return sint(r, w, &m->filename);
	case 6:
		return sint(r, w, &m->build_id);
	case 7:
	case 8:
	case 9:
	case 10:
		err = scalar(r, w, &v);
		if (f == 7)
			m->has_functions = v;
		else if (f == 8)
			m->has_filenames = v;
		else if (f == 9)
			m->has_lines = v;
		else
			m->has_inline = v;
		return err;
	}
	return skip(r, w);
}

static int f_line(void *ctx, struct rd *r, unsigned f, unsigned w)
{
	struct pprof_d_line *l = ctx;

	if (f == 1)
		return scalar(r, w, &l->function_id);
	if (f == 2)
		return sint(r, w, &l->line);
	return skip(r, w);
}

static int f_location(void *ctx, struct rd *r, unsigned f, unsigned w)
{
	struct pprof_d_location *loc = ctx;

	switch (f) {
	case 1:
		return scalar(r, w, &loc->id);
	case 2:
		return scalar(r, w, &loc->mapping_id);
	case 3:
		return scalar(r, w, &loc->address);
	case 4:
		return add_nested(r, w, &loc->lines, &loc->nlines,
				  sizeof(*loc->lines), f_line);
	}
	return skip(r, w);
}

static int f_function(void *ctx, struct rd *r, unsigned f, unsigned w)
{
	struct pprof_d_function *fn = ctx;

	switch (f) {
	case 1:
		return scalar(r, w, &fn->id);
	case 2:
		return sint(r, w, &fn->name);
	case 3:
		return sint(r, w, &fn->system_name);
	case 4:
		return sint(r, w, &fn->filename);
	case 5:
		return sint(r, w, &fn->start_line);
	}
	return skip(r, w);
}

static int add_string(struct pprof_profile *p, struct rd *r, unsigned w)
{
	struct rd s;
	char **slot, *str;

	if (w != W_LEN || sub(r, &s))
		return -EINVAL;
	if (memchr(s.p, '\0', s.end - s.p))
		return -EINVAL;
	if (!(slot = more(&p->strings, p->nstrings, sizeof(*slot))))
		return -ENOMEM;
	str = malloc(s.end - s.p + 1);
	if (!str)
		return -ENOMEM;
	memcpy(str, s.p, s.end - s.p);
	str[s.end - s.p] = '\0';
	*slot = str;
	p->nstrings++;
	return 0;
}

static int f_profile(void *ctx, struct rd *r, unsigned f, unsigned w)
{
	struct pprof_profile *p = ctx;

	switch (f) {
	case 1:
		return add_nested(r, w, &p->sample_types, &p->nsample_types,
				  sizeof(*p->sample_types), f_value_type);
	case 2:
		return add_nested(r, w, &p->samples, &p->nsamples,
				  sizeof(*p->samples), f_sample);
	case 3:
		return add_nested(r, w, &p->mappings, &p->nmappings,
				  sizeof(*p->mappings), f_mapping);
	case 4:
		return add_nested(r, w, &p->locations, &p->nlocations,
				  sizeof(*p->locations), f_location);
	case 5:
		return add_nested(r, w, &p->functions, &p->nfunctions,
				  sizeof(*p->functions), f_function);
	case 6:
		return add_string(p, r, w);
	case 9:
		return sint(r, w, &p->time_nanos);
	case 10:
		return sint(r, w, &p->duration_nanos);
	case 11:
		return nested(r, w, f_value_type, &p->period_type);
	case 12:
		return sint(r, w, &p->period);
	case 13:
		return repeated(r, w, &p->comments, &p->ncomments);
	case 14:
		return sint(r, w, &p->default_sample_type);
	}
	return skip(r, w);
}

/* Every string index in range, every id set, every sample's value count
 * that of the sample types. */
static int validate(const struct pprof_profile *p)
{
	const uint64_t ns = p->nstrings;
#define STR_OK(i) ((uint64_t)(i) < ns)

	if (!ns || p->strings[0][0])
		return -EINVAL; /* string_table[0] must be "" */
	for (size_t i = 0; i < p->nsample_types; i++)
		if (!STR_OK(p->sample_types[i].type) ||
		    !STR_OK(p->sample_types[i].unit))
			return -EINVAL;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pprof_d_sample *s = &p->samples[i];

		if (s->nvalues != p->nsample_types)
			return -EINVAL;
		for (size_t k = 0; k < s->nlabels; k++)
			if (!STR_OK(s->labels[k].key) ||
			    !STR_OK(s->labels[k].str) ||
			    !STR_OK(s->labels[k].num_unit))
				return -EINVAL;
	}
	for (size_t i = 0; i < p->nmappings; i++)
		if (!p->mappings[i].id || !STR_OK(p->mappings[i].filename) ||
		    !STR_OK(p->mappings[i].build_id))
			return -EINVAL;
	for (size_t i = 0; i < p->nlocations; i++)
		if (!p->locations[i].id)
			return -EINVAL;
	for (size_t i = 0; i < p->nfunctions; i++) {
		const struct pprof_d_function *f = &p->functions[i];

		if (!f->id || !STR_OK(f->name) || !STR_OK(f->system_name) ||
		    !STR_OK(f->filename))
			return -EINVAL;
	}
	for (size_t i = 0; i < p->ncomments; i++)
		if (!STR_OK(p->comments[i]))
			return -EINVAL;
	if (!STR_OK(p->period_type.type) || !STR_OK(p->period_type.unit) ||
	    !STR_OK(p->default_sample_type))
		return -EINVAL;
#undef STR_OK
	return 0;
}

/* gunzip in into *out (malloc'd), at most PPROF_DECODE_MAX bytes. */
static int gunzip(const uint8_t *in, size_t len, uint8_t **out, size_t *olen)
{
	z_stream z = {0};
	size_t cap = len * 4 + 4096;
	uint8_t *buf;
	int zr;

	if (cap > PPROF_DECODE_MAX)
		cap = PPROF_DECODE_MAX;
	if (len > UINT32_MAX || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -EINVAL;
	buf = malloc(cap);
	if (!buf) {
		inflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	for (;;) {
		if (z.total_out == cap) {
			uint8_t *nb;

			if (cap >= PPROF_DECODE_MAX) {
				zr = Z_BUF_ERROR;
				break;
			}
			cap = cap * 2 > PPROF_DECODE_MAX ? PPROF_DECODE_MAX
							 : cap * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				zr = Z_MEM_ERROR;
				break;
			}
			buf = nb;
		}
		z.next_out = buf + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr == Z_STREAM_END || (zr != Z_OK && zr != Z_BUF_ERROR))
			break;
		if (zr == Z_BUF_ERROR && z.avail_out)
			break; /* input ended before the stream did */
	}
	*olen = z.total_out;
	inflateEnd(&z);
	if (zr != Z_STREAM_END) {
		free(buf);
		return zr == Z_MEM_ERROR	 ? -ENOMEM
		       : cap >= PPROF_DECODE_MAX ? -EFBIG
						 : -EINVAL;
	}
	*out = buf;
	return 0;
}

int pprof_decode(const uint8_t *buf, size_t len, struct pprof_profile **out)
{
	uint8_t *raw = NULL;
	size_t rlen = len;
	struct pprof_profile *p;
	struct rd r;
	int err;

	*out = NULL;
	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		err = gunzip(buf, len, &raw, &rlen);
		if (err)
			return err;
		buf = raw;
	} else if (len > PPROF_DECODE_MAX) {
		return -EFBIG;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		free(raw);
		return -ENOMEM;
	}
	r.p = buf;
	r.end = buf + rlen;
	err = message(&r, f_profile, p);
	if (!err)
		err = validate(p);
	free(raw);
	if (err) {
		pprof_profile_free(p);
		return err;
	}
	*out = p;
	return 0;
}

const char *pprof_d_str(const struct pprof_profile *p, int64_t i)
{
	return i >= 0 && (uint64_t)i < p->nstrings ? p->strings[i] : "";
}

void pprof_profile_free(struct pprof_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	for (size_t i = 0; i < p->nsamples; i++) {
		free(p->samples[i].locs);
		free(p->samples[i].values);
		free(p->samples[i].labels);
	}
	for (size_t i = 0; i < p->nlocations; i++)
		free(p->locations[i].lines);
	free(p->strings);
	free(p->sample_types);
	free(p->samples);
	free(p->mappings);
	free(p->locations);
	free(p->functions);
	free(p->comments);
	free(p);
}
