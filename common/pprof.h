/* SPDX-License-Identifier: MIT */
/*
 * common/pprof.h - a self-contained encoder for pprof's profile.proto
 * (github.com/google/pprof/proto/profile.proto), gzip'd with zlib.
 *
 * Independent of the collector: the allocator's in-process API links it
 * too.  Build a profile with a struct pprof_builder: declare sample types,
 * the period, then add mappings, functions, locations and samples (ids
 * are handed out by the builder; strings, functions and locations are
 * interned), and encode.  Functions return 0 or -errno (-ENOMEM, -EINVAL)
 * unless stated; id-returning functions return 0 on failure (pprof ids
 * start at 1).  Not thread-safe: one builder per thread.
 */
#ifndef HS_PPROF_H
#define HS_PPROF_H

#include <stddef.h>
#include <stdint.h>

struct pprof_builder;

struct pprof_line {
	uint64_t function_id; /* from pprof_function */
	int64_t line;	      /* source line, 0 = unknown */
};

/* A sample label: a string value (str != NULL) or a number with an
 * optional unit ("bytes", ...; NULL = none). */
struct pprof_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *num_unit;
};

struct pprof_builder *pprof_new(void);
void pprof_free(struct pprof_builder *b);

/* Sample value types, in the order of every sample's values (Go: e.g.
 * "inuse_objects"/"count", "inuse_space"/"bytes").  Call before adding
 * samples.  At most PPROF_MAX_VALUES. */
#define PPROF_MAX_VALUES 16
int pprof_add_sample_type(struct pprof_builder *b, const char *type,
			  const char *unit);
/* Name the default sample type (one of those added). */
int pprof_set_default_sample_type(struct pprof_builder *b, const char *type);
/* period_type (e.g. "space"/"bytes") and period (e.g. the sampling period). */
int pprof_set_period(struct pprof_builder *b, const char *type,
		     const char *unit, int64_t period);
/* Wall clock of the profile (ns since the epoch) and the time it covers. */
void pprof_set_time(struct pprof_builder *b, int64_t time_nanos,
		    int64_t duration_nanos);
/* A free-text comment (shown by `go tool pprof -comments`). */
int pprof_add_comment(struct pprof_builder *b, const char *text);

/*
 * A mapping [start, limit) of `filename` at file offset `offset`; build_id
 * is a printable string (hex) or NULL.  The has_* flags say what the
 * locations in it carry.  Returns the mapping id (>= 1), 0 on ENOMEM.
 */
uint64_t pprof_add_mapping(struct pprof_builder *b, uint64_t start,
			   uint64_t limit, uint64_t offset,
			   const char *filename, const char *build_id,
			   int has_functions, int has_lines);
/* The function (name, filename; filename may be NULL), interned: the same
 * pair returns the same id.  0 on ENOMEM. */
uint64_t pprof_function(struct pprof_builder *b, const char *name,
			const char *filename);
/* The same with a system name (pprof's Function.system_name: the name as
 * the object spells it, e.g. mangled, where name is the demangled one);
 * system_name NULL = name.  Interned by (name, system_name, filename). */
uint64_t pprof_function_sys(struct pprof_builder *b, const char *name,
			    const char *system_name, const char *filename);
/*
 * The location of `address` in mapping_id (0 = none) with its lines
 * (innermost inline frame first; n may be 0), interned by address: the
 * first call for an address defines its lines.  0 on ENOMEM.
 */
uint64_t pprof_location(struct pprof_builder *b, uint64_t mapping_id,
			uint64_t address, const struct pprof_line *lines,
			size_t n);
/* Is a location for `address` known?  Its id, or 0. */
uint64_t pprof_location_find(const struct pprof_builder *b, uint64_t address);
/*
 * The same two within a scope: locations are interned by (scope, address),
 * so one profile can hold several address spaces (a host profile: one
 * scope per process, whose equal addresses are different code).  The
 * functions above are scope 0.
 */
uint64_t pprof_location_in(struct pprof_builder *b, uint64_t scope,
			   uint64_t mapping_id, uint64_t address,
			   const struct pprof_line *lines, size_t n);
uint64_t pprof_location_find_in(const struct pprof_builder *b, uint64_t scope,
				uint64_t address);
/*
 * One sample: location ids innermost first, `nvalues` values (must equal
 * the number of sample types), labels.  -EINVAL on a count mismatch.
 */
int pprof_add_sample(struct pprof_builder *b, const uint64_t *locs,
		     size_t nlocs, const int64_t *values, size_t nvalues,
		     const struct pprof_label *labels, size_t nlabels);

/* The uncompressed profile.proto bytes; *out is malloc'd. */
int pprof_encode_raw(struct pprof_builder *b, uint8_t **out, size_t *len);
/* The gzip'd profile (what `go tool pprof` reads); *out is malloc'd. */
int pprof_encode(struct pprof_builder *b, uint8_t **out, size_t *len);
/* gzip `in` (zlib deflate, windowBits 31); *out is malloc'd. */
/* -ELIBACC: the allocator's build (PPROF_ZLIB_DLOPEN) could not load
 * libz.so.1. */
int pprof_gzip(const uint8_t *in, size_t len, uint8_t **out, size_t *outlen);

#endif /* HS_PPROF_H */
