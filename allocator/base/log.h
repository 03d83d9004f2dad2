/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/log.h - diagnostics through a fixed buffer and write(2):
 * no malloc, no stdio (log.c).
 */
#ifndef HS_LOG_H
#define HS_LOG_H

#include <stdarg.h>
#include <stddef.h>

/* Format and write one line to stderr (a newline is added when fmt has
 * none; no prefix: callers write "heapscope: ..." themselves).
 * Async-signal-safe. */
void hs_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Tiny snprintf subset (%s %d %u %ld %lu %zu %zd %x %lx %p %%); returns
 * length written (truncated to n - 1).  Async-signal-safe. */
int hs_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int hs_snprintf(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* HS_LOG_H */
