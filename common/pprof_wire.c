// SPDX-License-Identifier: MIT
/*
 * pprof_wire.c - the protobuf wire writer under the pprof builder
 * (pprof.c): a growable byte buffer, varints, keys, scalar and
 * length-delimited fields, embedded messages; and gzip with zlib, linked
 * (the collector) or loaded on first use (the allocator's copy,
 * PPROF_ZLIB_DLOPEN).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof.h"
#include "pprof_wire.h"

#ifdef PPROF_ZLIB_DLOPEN
/* The allocator's copy loads zlib only when it writes a gzip'd profile:
 * linked, it made every process that preloads the allocator map libz.
 * dlopen once (pthread_once); the handle is kept. */
#include <dlfcn.h>
#include <pthread.h>

static struct {
	__typeof__(deflateInit2_) *init2;
	__typeof__(deflateBound) *bound;
	__typeof__(deflate) *deflate;
	__typeof__(deflateEnd) *end;
} zl;
static pthread_once_t zl_once = PTHREAD_ONCE_INIT;

static void zl_load(void)
{
	void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	zl.bound = (__typeof__(zl.bound))dlsym(h, "deflateBound");
	zl.deflate = (__typeof__(zl.deflate))dlsym(h, "deflate");
	zl.end = (__typeof__(zl.end))dlsym(h, "deflateEnd");
	/* init2 last: it is the "loaded" flag */
	if (zl.bound && zl.deflate && zl.end)
		zl.init2 = (__typeof__(zl.init2))dlsym(h, "deflateInit2_");
}

/* false when libz.so.1 cannot be loaded */
static bool zl_ready(void)
{
	pthread_once(&zl_once, zl_load);
	return zl.init2 != NULL;
}
#define Z_INIT2(z, level, method, bits, mem, strategy)                         \
	zl.init2(z, level, method, bits, mem, strategy, ZLIB_VERSION,          \
		 (int)sizeof(z_stream))
#define Z_BOUND zl.bound
#define Z_DEFLATE zl.deflate
#define Z_END zl.end
#else
static bool zl_ready(void)
{
	return true;
}
#define Z_INIT2 deflateInit2
#define Z_BOUND deflateBound
#define Z_DEFLATE deflate
#define Z_END deflateEnd
#endif

void pprof_buf_reserve(struct pprof_buf *b, size_t n)
{
	size_t ncap;
	uint8_t *np;

	if (b->oom || b->len + n <= b->cap)
		return;
	ncap = b->cap ? b->cap : 256;
	while (ncap < b->len + n)
		ncap *= 2;
	np = realloc(b->p, ncap);
	if (!np) {
		b->oom = true;
		return;
	}
	b->p = np;
	b->cap = ncap;
}

void pprof_put_bytes(struct pprof_buf *b, const void *src, size_t n)
{
	if (!n) /* src may be NULL (empty string table entry): memcpy UB */
		return;
	pprof_buf_reserve(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

void pprof_put_varint(struct pprof_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pprof_put_bytes(b, tmp, n);
}

void pprof_put_key(struct pprof_buf *b, unsigned field, unsigned wire)
{
	pprof_put_varint(b, (uint64_t)field << 3 | wire);
}

/* int64 / uint64 / bool scalar; proto3 omits zero values. */
void pprof_put_uint(struct pprof_buf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pprof_put_key(b, field, PPROF_WIRE_VARINT);
	pprof_put_varint(b, v);
}

void pprof_put_len(struct pprof_buf *b, unsigned field, const void *p, size_t n)
{
	pprof_put_key(b, field, PPROF_WIRE_LEN);
	pprof_put_varint(b, n);
	pprof_put_bytes(b, p, n);
}

/* An embedded message, taken from (and resetting) scratch buffer m. */
void pprof_put_msg(struct pprof_buf *b, unsigned field, struct pprof_buf *m)
{
	if (m->oom)
		b->oom = true;
	pprof_put_len(b, field, m->p, m->len);
	m->len = 0;
}

int pprof_gzip(const uint8_t *in, size_t len, uint8_t **out, size_t *outlen)
{
	z_stream z = {0};
	uint8_t *dst;
	uLong cap;
	int rc;

	if (!zl_ready())
		return -ELIBACC;
	/* windowBits 15 + 16: a gzip header and trailer. */
	if (Z_INIT2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8,
		    Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = Z_BOUND(&z, len) + 32;
	dst = malloc(cap);
	if (!dst) {
		Z_END(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = len;
	z.next_out = dst;
	z.avail_out = cap;
	rc = Z_DEFLATE(&z, Z_FINISH);
	Z_END(&z);
	if (rc != Z_STREAM_END) {
		free(dst);
		return -EIO;
	}
	*out = dst;
	*outlen = cap - z.avail_out;
	return 0;
}
