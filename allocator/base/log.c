/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/log.c - diagnostics without malloc or stdio: a tiny
 * vsnprintf subset into a fixed stack buffer, written with write(2) to
 * stderr.  Async-signal-safe; usable before the allocator is initialised.
 * hs_log adds a newline when the message lacks one, no prefix: callers
 * write "heapscope: ..." themselves.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/assert.h"
#include "base/log.h"

#define LOG_BUF 512

struct out {
	char *buf;
	size_t n;   /* capacity including the terminating NUL */
	size_t len; /* characters written so far (<= n - 1) */
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->n)
		o->buf[o->len] = c;
	o->len++;
}

static void put_str(struct out *o, const char *s)
{
	if (!s)
		s = "(null)";
	while (*s)
		put(o, *s++);
}

static void put_uint(struct out *o, uint64_t v, unsigned base, int minw)
{
	char tmp[24];
	int i = 0;
	do {
		unsigned d = (unsigned)(v % base);
		tmp[i++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v /= base;
	} while (v);
	while (i < minw)
		tmp[i++] = '0';
	while (i)
		put(o, tmp[--i]);
}

static void put_int(struct out *o, int64_t v)
{
	if (v < 0) {
		put(o, '-');
		put_uint(o, (uint64_t)0 - (uint64_t)v, 10, 0);
	} else {
		put_uint(o, (uint64_t)v, 10, 0);
	}
}

int hs_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
	struct out o = {buf, n, 0};
	for (const char *f = fmt; *f; f++) {
		if (*f != '%') {
			put(&o, *f);
			continue;
		}
		f++;
		int lng = 0, sz = 0;
		while (*f == 'l') {
			lng++;
			f++;
		}
		if (*f == 'z') {
			sz = 1;
			f++;
		}
		switch (*f) {
		case 'd':
		case 'i':
			if (sz)
				put_int(&o, (int64_t)va_arg(ap, ssize_t));
			else if (lng)
				put_int(&o, (int64_t)va_arg(ap, long));
			else
				put_int(&o, va_arg(ap, int));
			break;
		case 'u':
		case 'x':
			if (sz)
				put_uint(&o, va_arg(ap, size_t),
					 *f == 'x' ? 16 : 10, 0);
			else if (lng)
				put_uint(&o, va_arg(ap, unsigned long),
					 *f == 'x' ? 16 : 10, 0);
			else
				put_uint(&o, va_arg(ap, unsigned),
					 *f == 'x' ? 16 : 10, 0);
			break;
		case 'p':
			put_str(&o, "0x");
			put_uint(&o, (uintptr_t)va_arg(ap, void *), 16, 0);
			break;
		case 's':
			put_str(&o, va_arg(ap, const char *));
			break;
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case '%':
			put(&o, '%');
			break;
		case '\0':
			f--;
			break;
		default:
			put(&o, '%');
			put(&o, *f);
			break;
		}
	}
	if (n)
		buf[o.len < n ? o.len : n - 1] = '\0';
	return (int)(o.len < n ? o.len : (n ? n - 1 : 0));
}

int hs_snprintf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = hs_vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

void hs_log(const char *fmt, ...)
{
	char buf[LOG_BUF];
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	int len = hs_vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len > 0 && buf[len - 1] != '\n' && (size_t)len + 1 < sizeof(buf))
		buf[len++] = '\n';
	for (int off = 0; off < len;) {
		ssize_t w = write(2, buf + off, (size_t)(len - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (int)w;
	}
	errno = saved;
}

void hs_assert_fail(const char *expr, const char *file, int line)
{
	hs_log("heapscope: assertion failed: %s (%s:%d)", expr, file, line);
	abort();
}
