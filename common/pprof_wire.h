/* SPDX-License-Identifier: MIT */
/*
 * pprof_wire.h - the protobuf wire writer that pprof.c encodes with
 * (pprof_wire.c; pprof_gzip is in pprof.h).  Internal to common/.  A
 * buffer that cannot grow sets oom and ignores further writes: check it
 * once at the end.  Not thread-safe: one buffer per thread.
 */
#ifndef HS_PPROF_WIRE_H
#define HS_PPROF_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Wire types (protobuf encoding). */
enum { PPROF_WIRE_VARINT = 0, PPROF_WIRE_LEN = 2 };

/* A growable byte buffer: zero-initialise; p is malloc'd. */
struct pprof_buf {
	uint8_t *p;
	size_t len, cap;
	bool oom; /* an allocation failed: contents incomplete */
};

/* Room for n more bytes (or oom). */
void pprof_buf_reserve(struct pprof_buf *b, size_t n);
/* Append n bytes of src (src may be NULL when n is 0). */
void pprof_put_bytes(struct pprof_buf *b, const void *src, size_t n);
/* Append v as a base-128 varint. */
void pprof_put_varint(struct pprof_buf *b, uint64_t v);
/* Append the key of field `field` with wire type `wire`. */
void pprof_put_key(struct pprof_buf *b, unsigned field, unsigned wire);
/* int64 / uint64 / bool scalar field; proto3 omits zero values. */
void pprof_put_uint(struct pprof_buf *b, unsigned field, uint64_t v);
/* Length-delimited field: n bytes of p. */
void pprof_put_len(struct pprof_buf *b, unsigned field, const void *p,
		   size_t n);
/* An embedded message, taken from (and resetting) scratch buffer m. */
void pprof_put_msg(struct pprof_buf *b, unsigned field, struct pprof_buf *m);

#endif /* HS_PPROF_WIRE_H */
