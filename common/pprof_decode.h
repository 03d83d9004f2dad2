/* SPDX-License-Identifier: MIT */
/*
 * common/pprof_decode.h - a bounded, validating decoder for pprof's
 * profile.proto (github.com/google/pprof/proto/profile.proto), gzip'd or
 * not: what `heapscope symbolize` needs to read a profile back and write
 * it again with common/pprof.h.  Every field the encoder writes is kept
 * (sample types, samples with labels, mappings, locations with lines,
 * functions, strings, times, period, comments, default sample type);
 * drop_frames, keep_frames and unknown fields are skipped.  Not
 * thread-safe per profile; distinct profiles are independent.
 */
#ifndef HS_PPROF_DECODE_H
#define HS_PPROF_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes a profile may have once gunzipped (a larger one is -EFBIG). */
#define PPROF_DECODE_MAX (512u << 20)

/* String fields are indices into strings[] (checked: < nstrings). */
struct pprof_d_value_type {
	int64_t type, unit;
};

struct pprof_d_label {
	int64_t key, str, num, num_unit;
};

struct pprof_d_sample {
	uint64_t *locs; /* location ids, innermost first */
	size_t nlocs;
	int64_t *values;
	size_t nvalues;
	struct pprof_d_label *labels;
	size_t nlabels;
};

struct pprof_d_mapping {
	uint64_t id, start, limit, offset;
	int64_t filename, build_id;
	bool has_functions, has_filenames, has_lines, has_inline;
};

struct pprof_d_line {
	uint64_t function_id;
	int64_t line;
};

struct pprof_d_location {
	uint64_t id, mapping_id, address;
	struct pprof_d_line *lines; /* innermost inlined call first */
	size_t nlines;
};

struct pprof_d_function {
	uint64_t id;
	int64_t name, system_name, filename, start_line;
};

struct pprof_profile {
	char **strings; /* strings[0] is "" */
	size_t nstrings;
	struct pprof_d_value_type *sample_types;
	size_t nsample_types;
	struct pprof_d_sample *samples;
	size_t nsamples;
	struct pprof_d_mapping *mappings;
	size_t nmappings;
	struct pprof_d_location *locations;
	size_t nlocations;
	struct pprof_d_function *functions;
	size_t nfunctions;
	int64_t time_nanos, duration_nanos, period, default_sample_type;
	struct pprof_d_value_type period_type;
	int64_t *comments;
	size_t ncomments;
};

/*
 * Decode len bytes of buf (gzip'd, as pprof writes it, or raw
 * profile.proto) into *out (pprof_profile_free).  0, -EINVAL (not a
 * profile: bad gzip, bad wire format, a string index out of range, an id
 * 0, a sample whose value count differs from the sample types), -EFBIG
 * (over PPROF_DECODE_MAX gunzipped) or -ENOMEM.  Ids are not checked to
 * be unique or to exist: the caller looks them up.
 */
int pprof_decode(const uint8_t *buf, size_t len, struct pprof_profile **out);
/* The string at index i ("" when out of range). */
const char *pprof_d_str(const struct pprof_profile *p, int64_t i);
void pprof_profile_free(struct pprof_profile *p);

#endif /* HS_PPROF_DECODE_H */
