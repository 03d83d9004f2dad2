// SPDX-License-Identifier: MIT
/*
 * test_pprof_decode.c - cmocka tests of common/pprof_decode.c: a profile
 * built with common/pprof.c decodes to what was put in (gzip'd and raw);
 * every prefix of it and every single-byte corruption is refused or
 * decoded without reading out of bounds (run under the sanitizers too);
 * hand-made wire inputs with an out-of-range string index, an overlong
 * varint, a length past the end, a value count that is not the sample
 * types', a wire type protobuf does not have are -EINVAL; unpacked
 * repeated fields are read as packed ones.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pprof.h"
#include "pprof_decode.h"

static struct pprof_builder *sample_profile(void)
{
	struct pprof_builder *b = pprof_new();
	struct pprof_line lines[2];
	struct pprof_label lab[2] = {{.key = "pid", .num = 42},
				     {.key = "comm", .str = "names"}};
	uint64_t m, l1, l2, locs[2];
	int64_t v1[2] = {3, 4096}, v2[2] = {-1, 1ll << 40};

	assert_non_null(b);
	assert_int_equal(pprof_add_sample_type(b, "inuse_objects", "count"), 0);
	assert_int_equal(pprof_add_sample_type(b, "inuse_space", "bytes"), 0);
	assert_int_equal(pprof_set_default_sample_type(b, "inuse_space"), 0);
	assert_int_equal(pprof_set_period(b, "space", "bytes", 524288), 0);
	pprof_set_time(b, 1764590000000000000ll, 1500000000);
	assert_int_equal(pprof_add_comment(b, "a note"), 0);
	m = pprof_add_mapping(b, 0x1000, 0x5000, 0x1000, "/bin/names",
			      "eed03a87", 1, 1);
	assert_int_equal(m, 1);
	lines[0].function_id = pprof_function_sys(b, "ns::inner(int)",
						  "_ZN2ns5innerEi", "a.cc");
	lines[0].line = 27;
	lines[1].function_id = pprof_function(b, "outer", "a.cc");
	lines[1].line = 46;
	l1 = pprof_location(b, m, 0x1261, lines, 2);
	l2 = pprof_location(b, m, 0x2000, NULL, 0);
	locs[0] = l1;
	locs[1] = l2;
	assert_int_equal(pprof_add_sample(b, locs, 2, v1, 2, lab, 2), 0);
	assert_int_equal(pprof_add_sample(b, locs + 1, 1, v2, 2, NULL, 0), 0);
	return b;
}

static void check_sample_profile(const struct pprof_profile *p)
{
	const struct pprof_d_location *loc;
	const struct pprof_d_function *f;

	assert_int_equal(p->nsample_types, 2);
	assert_string_equal(pprof_d_str(p, p->sample_types[1].type),
			    "inuse_space");
	assert_string_equal(pprof_d_str(p, p->sample_types[1].unit), "bytes");
	assert_string_equal(pprof_d_str(p, p->default_sample_type),
			    "inuse_space");
	assert_string_equal(pprof_d_str(p, p->period_type.type), "space");
	assert_int_equal(p->period, 524288);
	assert_int_equal(p->time_nanos, 1764590000000000000ll);
	assert_int_equal(p->duration_nanos, 1500000000);
	assert_int_equal(p->ncomments, 1);
	assert_string_equal(pprof_d_str(p, p->comments[0]), "a note");

	assert_int_equal(p->nmappings, 1);
	assert_int_equal(p->mappings[0].id, 1);
	assert_int_equal(p->mappings[0].start, 0x1000);
	assert_int_equal(p->mappings[0].limit, 0x5000);
	assert_int_equal(p->mappings[0].offset, 0x1000);
	assert_string_equal(pprof_d_str(p, p->mappings[0].filename),
			    "/bin/names");
	assert_string_equal(pprof_d_str(p, p->mappings[0].build_id),
			    "eed03a87");
	assert_true(p->mappings[0].has_functions);

	assert_int_equal(p->nlocations, 2);
	loc = &p->locations[0];
	assert_int_equal(loc->address, 0x1261);
	assert_int_equal(loc->mapping_id, 1);
	assert_int_equal(loc->nlines, 2);
	assert_int_equal(loc->lines[0].line, 27);
	assert_int_equal(loc->lines[1].line, 46);
	assert_int_equal(p->locations[1].nlines, 0);
	assert_int_equal(p->nfunctions, 2);
	f = &p->functions[loc->lines[0].function_id - 1];
	assert_int_equal(f->id, loc->lines[0].function_id);
	assert_string_equal(pprof_d_str(p, f->name), "ns::inner(int)");
	assert_string_equal(pprof_d_str(p, f->system_name), "_ZN2ns5innerEi");
	assert_string_equal(pprof_d_str(p, f->filename), "a.cc");

	assert_int_equal(p->nsamples, 2);
	assert_int_equal(p->samples[0].nlocs, 2);
	assert_int_equal(p->samples[0].locs[0], loc->id);
	assert_int_equal(p->samples[0].values[0], 3);
	assert_int_equal(p->samples[0].values[1], 4096);
	assert_int_equal(p->samples[0].nlabels, 2);
	assert_string_equal(pprof_d_str(p, p->samples[0].labels[0].key), "pid");
	assert_int_equal(p->samples[0].labels[0].num, 42);
	assert_string_equal(pprof_d_str(p, p->samples[0].labels[1].str),
			    "names");
	assert_int_equal(p->samples[1].values[0], -1);
	assert_int_equal(p->samples[1].values[1], 1ll << 40);
}

static void test_round_trip(void **state)
{
	struct pprof_builder *b = sample_profile();
	struct pprof_profile *p;
	uint8_t *gz, *raw;
	size_t gzlen, rawlen;

	(void)state;
	assert_int_equal(pprof_encode_raw(b, &raw, &rawlen), 0);
	assert_int_equal(pprof_encode(b, &gz, &gzlen), 0);
	assert_int_equal(pprof_decode(gz, gzlen, &p), 0);
	check_sample_profile(p);
	pprof_profile_free(p);
	assert_int_equal(pprof_decode(raw, rawlen, &p), 0);
	check_sample_profile(p);
	pprof_profile_free(p);
	free(gz);
	free(raw);
	pprof_free(b);
}

/* Every prefix and every byte flipped: refused or decoded, never a crash
 * (ASan/UBSan in scripts/test-sanitizers.sh); a truncated gzip stream is
 * always refused. */
static void test_prefixes_and_flips(void **state)
{
	struct pprof_builder *b = sample_profile();
	struct pprof_profile *p;
	uint8_t *gz, *raw, *copy;
	size_t gzlen, rawlen;
	size_t refused = 0;

	(void)state;
	assert_int_equal(pprof_encode_raw(b, &raw, &rawlen), 0);
	assert_int_equal(pprof_encode(b, &gz, &gzlen), 0);
	for (size_t n = 0; n < rawlen; n++) {
		copy = malloc(n + 1); /* exactly n bytes readable + 1 */
		memcpy(copy, raw, n);
		if (pprof_decode(copy, n, &p) == 0)
			pprof_profile_free(p);
		else
			refused++;
		free(copy);
	}
	/* Most prefixes cut a field or lose the string table. */
	assert_true(refused > rawlen / 2);
	for (size_t n = 2; n < gzlen; n++)
		assert_int_equal(pprof_decode(gz, n, &p), -EINVAL);
	copy = malloc(rawlen);
	for (size_t i = 0; i < rawlen; i++) {
		memcpy(copy, raw, rawlen);
		copy[i] ^= 0xff;
		if (pprof_decode(copy, rawlen, &p) == 0)
			pprof_profile_free(p);
	}
	free(copy);
	free(gz);
	free(raw);
	pprof_free(b);
}

static int decode(const uint8_t *buf, size_t len)
{
	struct pprof_profile *p;
	int err = pprof_decode(buf, len, &p);

	if (!err)
		pprof_profile_free(p);
	return err;
}

static void test_bad_wire(void **state)
{
	/* string_table "" then "x" */
	const uint8_t ok[] = {0x32, 0x00, 0x32, 0x01, 'x'};
	/* + sample_type {type: 2} (index 2: out of range) */
	const uint8_t bad_str[] = {0x32, 0x00, 0x32, 0x01, 'x',
				   0x0a, 0x02, 0x08, 0x02};
	/* time_nanos with an 11-byte varint */
	const uint8_t long_varint[] = {0x32, 0x00, 0x48, 0xff, 0xff,
				       0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0xff, 0x01};
	/* a string longer than the input */
	const uint8_t past_end[] = {0x32, 0x00, 0x32, 0x7f, 'x'};
	/* one sample type, a sample with two values (packed) */
	const uint8_t values[] = {0x32, 0x00, 0x0a, 0x00, 0x12,
				  0x04, 0x12, 0x02, 0x01, 0x02};
	/* field 15 with wire type 3 (a group: not in proto3) */
	const uint8_t group[] = {0x32, 0x00, 0x7b};
	/* no string table at all */
	const uint8_t no_strings[] = {0x48, 0x01};
	/* a mapping with id 0 */
	const uint8_t map_id0[] = {0x32, 0x00, 0x1a, 0x02, 0x10, 0x05};
	/* a string holding a NUL */
	const uint8_t nul[] = {0x32, 0x00, 0x32, 0x02, 'a', 0x00};

	(void)state;
	assert_int_equal(decode(ok, sizeof(ok)), 0);
	assert_int_equal(decode(bad_str, sizeof(bad_str)), -EINVAL);
	assert_int_equal(decode(long_varint, sizeof(long_varint)), -EINVAL);
	assert_int_equal(decode(past_end, sizeof(past_end)), -EINVAL);
	assert_int_equal(decode(values, sizeof(values)), -EINVAL);
	assert_int_equal(decode(group, sizeof(group)), -EINVAL);
	assert_int_equal(decode(no_strings, sizeof(no_strings)), -EINVAL);
	assert_int_equal(decode(map_id0, sizeof(map_id0)), -EINVAL);
	assert_int_equal(decode(nul, sizeof(nul)), -EINVAL);
	assert_int_equal(decode((const uint8_t *)"\x1f\x8bjunk", 6), -EINVAL);
}

static void test_unpacked(void **state)
{
	/* two sample types; a sample with location ids 7 and 9 and values
	 * 5 and 6, each as its own (unpacked) varint field */
	const uint8_t buf[] = {0x32, 0x00, 0x0a, 0x00, 0x0a, 0x00, 0x12, 0x08,
			       0x08, 0x07, 0x08, 0x09, 0x10, 0x05, 0x10, 0x06};
	struct pprof_profile *p;

	(void)state;
	assert_int_equal(pprof_decode(buf, sizeof(buf), &p), 0);
	assert_int_equal(p->nsamples, 1);
	assert_int_equal(p->samples[0].nlocs, 2);
	assert_int_equal(p->samples[0].locs[0], 7);
	assert_int_equal(p->samples[0].locs[1], 9);
	assert_int_equal(p->samples[0].nvalues, 2);
	assert_int_equal(p->samples[0].values[1], 6);
	pprof_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_prefixes_and_flips),
		cmocka_unit_test(test_bad_wire),
		cmocka_unit_test(test_unpacked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
