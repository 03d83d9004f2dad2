// SPDX-License-Identifier: MIT
/*
 * test_pprof.c - cmocka tests of common/pprof.c: encode a known profile,
 * gunzip it with zlib, decode the protobuf wire format back (a minimal
 * decoder written here) and check every field that was put in.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "pprof.h"

/* ------------------------------------------------------------ decoder */

struct field {
	unsigned num, wire;
	uint64_t v;	  /* varint */
	const uint8_t *p; /* length-delimited */
	size_t len;
};

static uint64_t get_varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*p < end) {
		uint8_t c = *(*p)++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
		shift += 7;
		assert_true(shift < 70);
	}
	fail_msg("truncated varint");
	return v;
}

/* Next field of [*p, end); false at the end. */
static bool next_field(const uint8_t **p, const uint8_t *end, struct field *f)
{
	uint64_t key;

	if (*p >= end)
		return false;
	key = get_varint(p, end);
	f->num = key >> 3;
	f->wire = key & 7;
	if (f->wire == 0) {
		f->v = get_varint(p, end);
	} else {
		assert_int_equal(f->wire, 2);
		f->len = get_varint(p, end);
		assert_true(f->len <= (size_t)(end - *p));
		f->p = *p;
		*p += f->len;
	}
	return true;
}

struct decoded {
	char *strs[64];
	size_t nstrs;
	uint64_t types[4][2];
	size_t ntypes;
	uint64_t period_type[2];
	int64_t period, time_nanos, duration_nanos;
	uint64_t comments[4];
	size_t ncomments;
	uint64_t default_type;
	/* sample 0 */
	size_t nsamples;
	uint64_t s0_locs[8];
	size_t s0_nlocs;
	int64_t s0_vals[4];
	size_t s0_nvals;
	uint64_t s0_label_key[4], s0_label_str[4];
	int64_t s0_label_num[4];
	size_t s0_nlabels;
	/* mapping 1 */
	uint64_t m_id, m_start, m_limit, m_off, m_file, m_bid, m_hasf;
	size_t nmaps;
	/* locations */
	uint64_t loc_id[8], loc_map[8], loc_addr[8], loc_func[8];
	int64_t loc_line[8];
	size_t nlocs;
	/* functions */
	uint64_t fn_id[8], fn_name[8], fn_file[8];
	size_t nfuncs;
};

static void decode_packed(const struct field *f, uint64_t *out, size_t *n,
			  size_t max)
{
	const uint8_t *p = f->p, *end = f->p + f->len;

	*n = 0;
	while (p < end && *n < max)
		out[(*n)++] = get_varint(&p, end);
}

static void decode(const uint8_t *buf, size_t len, struct decoded *d)
{
	const uint8_t *p = buf, *end = buf + len;
	struct field f, g, h;

	memset(d, 0, sizeof(*d));
	while (next_field(&p, end, &f)) {
		const uint8_t *q = f.p, *qe = f.p + f.len;

		switch (f.num) {
		case 1:
		case 11: {
			uint64_t *t = f.num == 1 ? d->types[d->ntypes++]
						 : d->period_type;
			while (next_field(&q, qe, &g))
				t[g.num - 1] = g.v;
			break;
		}
		case 2:
			if (d->nsamples++)
				break;
			while (next_field(&q, qe, &g)) {
				if (g.num == 1)
					decode_packed(&g, d->s0_locs,
						      &d->s0_nlocs, 8);
				else if (g.num == 2)
					decode_packed(&g,
						      (uint64_t *)d->s0_vals,
						      &d->s0_nvals, 4);
				else if (g.num == 3) {
					const uint8_t *r = g.p,
						      *re = g.p + g.len;
					size_t i = d->s0_nlabels++;

					while (next_field(&r, re, &h)) {
						if (h.num == 1)
							d->s0_label_key[i] =
								h.v;
						if (h.num == 2)
							d->s0_label_str[i] =
								h.v;
						if (h.num == 3)
							d->s0_label_num[i] =
								(int64_t)h.v;
					}
				}
			}
			break;
		case 3:
			d->nmaps++;
			while (next_field(&q, qe, &g)) {
				uint64_t *dst[] = {NULL,      &d->m_id,
						   &d->m_start, &d->m_limit,
						   &d->m_off, &d->m_file,
						   &d->m_bid, &d->m_hasf};
				if (g.num < 8)
					*dst[g.num] = g.v;
			}
			break;
		case 4: {
			size_t i = d->nlocs++;

			while (next_field(&q, qe, &g)) {
				if (g.num == 1)
					d->loc_id[i] = g.v;
				else if (g.num == 2)
					d->loc_map[i] = g.v;
				else if (g.num == 3)
					d->loc_addr[i] = g.v;
				else if (g.num == 4) {
					const uint8_t *r = g.p,
						      *re = g.p + g.len;
					while (next_field(&r, re, &h)) {
						if (h.num == 1)
							d->loc_func[i] = h.v;
						if (h.num == 2)
							d->loc_line[i] =
								(int64_t)h.v;
					}
				}
			}
			break;
		}
		case 5: {
			size_t i = d->nfuncs++;

			while (next_field(&q, qe, &g)) {
				if (g.num == 1)
					d->fn_id[i] = g.v;
				else if (g.num == 2)
					d->fn_name[i] = g.v;
				else if (g.num == 4)
					d->fn_file[i] = g.v;
			}
			break;
		}
		case 6:
			d->strs[d->nstrs++] = strndup((const char *)f.p, f.len);
			break;
		case 9:
			d->time_nanos = (int64_t)f.v;
			break;
		case 10:
			d->duration_nanos = (int64_t)f.v;
			break;
		case 12:
			d->period = (int64_t)f.v;
			break;
		case 13:
			d->comments[d->ncomments++] = f.v;
			break;
		case 14:
			d->default_type = f.v;
			break;
		default:
			fail_msg("unexpected field %u", f.num);
		}
	}
}

static void decoded_free(struct decoded *d)
{
	for (size_t i = 0; i < d->nstrs; i++)
		free(d->strs[i]);
}

static uint8_t *gunzip(const uint8_t *in, size_t len, size_t *outlen)
{
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	z_stream z = {0};

	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, 31), Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	*outlen = cap - z.avail_out;
	inflateEnd(&z);
	return out;
}

/* ------------------------------------------------------------ tests */

#define S(i) (d.strs[(i)])

static void test_known_profile(void **state)
{
	struct pprof_builder *b = pprof_new();
	struct pprof_line line;
	struct pprof_label labels[] = {
		{.key = "comm", .str = "hold"},
		{.key = "pid", .num = 4242},
	};
	uint64_t map, f1, f2, l1, l2, locs[2];
	int64_t vals[2] = {3, 300000};
	uint8_t *gz, *raw;
	size_t gzlen, rawlen;
	struct decoded d;

	(void)state;
	assert_non_null(b);
	assert_int_equal(pprof_add_sample_type(b, "inuse_objects", "count"), 0);
	assert_int_equal(pprof_add_sample_type(b, "inuse_space", "bytes"), 0);
	assert_int_equal(pprof_set_default_sample_type(b, "inuse_space"), 0);
	assert_int_equal(pprof_set_period(b, "space", "bytes", 524288), 0);
	pprof_set_time(b, 1700000000123456789LL, 5000000000LL);
	assert_int_equal(pprof_add_comment(b, "lost events: 0"), 0);
	map = pprof_add_mapping(b, 0x400000, 0x401000, 0, "/bin/hold",
				"abcdef01", 1, 1);
	assert_int_equal(map, 1);
	f1 = pprof_function(b, "hold_100mib", "hold.c");
	f2 = pprof_function(b, "main", "hold.c");
	assert_int_equal(f1, 1);
	assert_int_equal(f2, 2);
	/* Interned: the same pair gives the same id. */
	assert_int_equal(pprof_function(b, "hold_100mib", "hold.c"), 1);
	line = (struct pprof_line){f1, 17};
	l1 = pprof_location(b, map, 0x400123, &line, 1);
	line = (struct pprof_line){f2, 40};
	l2 = pprof_location(b, map, 0x400456, &line, 1);
	assert_int_equal(pprof_location(b, map, 0x400123, NULL, 0), l1);
	assert_int_equal(pprof_location_find(b, 0x400456), l2);
	assert_int_equal(pprof_location_find(b, 0x999), 0);
	locs[0] = l1;
	locs[1] = l2;
	/* Values must match the sample types. */
	assert_int_equal(pprof_add_sample(b, locs, 2, vals, 1, NULL, 0),
			 -EINVAL);
	assert_int_equal(pprof_add_sample(b, locs, 2, vals, 2, labels, 2), 0);
	vals[0] = 1;
	vals[1] = -5; /* negative values are valid int64 varints */
	assert_int_equal(pprof_add_sample(b, locs + 1, 1, vals, 2, NULL, 0), 0);
	assert_int_equal(pprof_encode(b, &gz, &gzlen), 0);
	assert_true(gzlen > 18 && gz[0] == 0x1f && gz[1] == 0x8b);
	raw = gunzip(gz, gzlen, &rawlen);
	decode(raw, rawlen, &d);

	assert_string_equal(S(0), "");
	assert_int_equal(d.ntypes, 2);
	assert_string_equal(S(d.types[0][0]), "inuse_objects");
	assert_string_equal(S(d.types[0][1]), "count");
	assert_string_equal(S(d.types[1][0]), "inuse_space");
	assert_string_equal(S(d.types[1][1]), "bytes");
	assert_string_equal(S(d.default_type), "inuse_space");
	assert_string_equal(S(d.period_type[0]), "space");
	assert_string_equal(S(d.period_type[1]), "bytes");
	assert_int_equal(d.period, 524288);
	assert_int_equal(d.time_nanos, 1700000000123456789LL);
	assert_int_equal(d.duration_nanos, 5000000000LL);
	assert_int_equal(d.ncomments, 1);
	assert_string_equal(S(d.comments[0]), "lost events: 0");

	assert_int_equal(d.nsamples, 2);
	assert_int_equal(d.s0_nlocs, 2);
	assert_int_equal(d.s0_locs[0], l1);
	assert_int_equal(d.s0_locs[1], l2);
	assert_int_equal(d.s0_nvals, 2);
	assert_int_equal(d.s0_vals[0], 3);
	assert_int_equal(d.s0_vals[1], 300000);
	assert_int_equal(d.s0_nlabels, 2);
	assert_string_equal(S(d.s0_label_key[0]), "comm");
	assert_string_equal(S(d.s0_label_str[0]), "hold");
	assert_string_equal(S(d.s0_label_key[1]), "pid");
	assert_int_equal(d.s0_label_num[1], 4242);

	assert_int_equal(d.nmaps, 1);
	assert_int_equal(d.m_id, 1);
	assert_int_equal(d.m_start, 0x400000);
	assert_int_equal(d.m_limit, 0x401000);
	assert_int_equal(d.m_off, 0);
	assert_string_equal(S(d.m_file), "/bin/hold");
	assert_string_equal(S(d.m_bid), "abcdef01");
	assert_int_equal(d.m_hasf, 1);

	assert_int_equal(d.nlocs, 2);
	assert_int_equal(d.loc_id[0], l1);
	assert_int_equal(d.loc_map[0], map);
	assert_int_equal(d.loc_addr[0], 0x400123);
	assert_int_equal(d.loc_func[0], f1);
	assert_int_equal(d.loc_line[0], 17);
	assert_int_equal(d.loc_addr[1], 0x400456);
	assert_int_equal(d.loc_line[1], 40);

	assert_int_equal(d.nfuncs, 2);
	assert_int_equal(d.fn_id[0], 1);
	assert_string_equal(S(d.fn_name[0]), "hold_100mib");
	assert_string_equal(S(d.fn_file[0]), "hold.c");
	assert_string_equal(S(d.fn_name[1]), "main");

	decoded_free(&d);
	free(raw);
	free(gz);
	pprof_free(b);
}

/* Many strings and locations: the interning tables grow and stay exact. */
static void test_interning_grows(void **state)
{
	struct pprof_builder *b = pprof_new();
	char name[32];

	(void)state;
	assert_non_null(b);
	for (unsigned i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		assert_int_equal(pprof_function(b, name, "x.c"), i + 1);
		assert_int_equal(pprof_location(b, 0, 0x1000 + i, NULL, 0),
				 i + 1);
	}
	for (unsigned i = 0; i < 5000; i += 7) {
		snprintf(name, sizeof(name), "f%u", i);
		assert_int_equal(pprof_function(b, name, "x.c"), i + 1);
		assert_int_equal(pprof_location_find(b, 0x1000 + i), i + 1);
	}
	pprof_free(b);
}

/* Scoped locations (a host profile: one scope per process): the same
 * address in two scopes is two locations, in one scope one; scope 0 is
 * what pprof_location uses.  Across growth of the table too. */
static void test_location_scopes(void **state)
{
	struct pprof_builder *b = pprof_new();
	uint64_t a, c, z;

	(void)state;
	assert_non_null(b);
	z = pprof_location(b, 1, 0x400123, NULL, 0);
	a = pprof_location_in(b, 1, 2, 0x400123, NULL, 0);
	c = pprof_location_in(b, 2, 3, 0x400123, NULL, 0);
	assert_int_equal(z, 1);
	assert_int_equal(a, 2);
	assert_int_equal(c, 3);
	assert_int_equal(pprof_location_in(b, 1, 2, 0x400123, NULL, 0), a);
	assert_int_equal(pprof_location_find_in(b, 2, 0x400123), c);
	assert_int_equal(pprof_location_find_in(b, 0, 0x400123), z);
	assert_int_equal(pprof_location_find(b, 0x400123), z);
	assert_int_equal(pprof_location_find_in(b, 3, 0x400123), 0);
	for (uint64_t s = 3; s < 3000; s++)
		assert_int_equal(pprof_location_in(b, s, 0, 0x400123, NULL, 0),
				 s + 1);
	for (uint64_t s = 3; s < 3000; s += 11)
		assert_int_equal(pprof_location_find_in(b, s, 0x400123), s + 1);
	assert_int_equal(pprof_location_find_in(b, 1, 0x400123), a);
	pprof_free(b);
}

static void test_empty_profile(void **state)
{
	struct pprof_builder *b = pprof_new();
	uint8_t *gz, *raw;
	size_t gzlen, rawlen;
	struct decoded d;

	(void)state;
	assert_int_equal(pprof_encode(b, &gz, &gzlen), 0);
	raw = gunzip(gz, gzlen, &rawlen);
	decode(raw, rawlen, &d);
	assert_int_equal(d.nstrs, 1);
	assert_int_equal(d.nsamples, 0);
	decoded_free(&d);
	free(raw);
	free(gz);
	pprof_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_profile),
		cmocka_unit_test(test_interning_grows),
		cmocka_unit_test(test_location_scopes),
		cmocka_unit_test(test_empty_profile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
