/* SPDX-License-Identifier: MIT */
/*
 * allocator/internal.h - prototypes the allocator core exports to other
 * allocator files (the sampling side in particular).  Internal: nothing
 * here is visible outside libheapscope (built with -fvisibility=hidden).
 *
 * Module-private declarations of the core (size classes, spans, pagemap,
 * page heap, thread cache, central free lists) live in their own headers
 * next to their .c files; this file holds only what crosses to the
 * sampling side, plus os/log/options which everyone uses.
 */
#ifndef HS_INTERNAL_H
#define HS_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hs_common.h"
#include "option_list.h"

/* ---- allocation without the sampler (proxies, re-entrant calls) ---- */

/* Allocate from the normal heap, never sampled.  align 0 = default (16),
 * else a power of two.  Returns NULL on ENOMEM (errno not touched). */
void *hs_alloc_unsampled(size_t size, size_t align);
/* Free a pointer from hs_alloc_unsampled or any non-sampled block. */
void hs_free_unsampled(void *p);
/* Bytes a normal-heap allocation of (size, align) would really reserve:
 * the size-class size for small requests, page-rounded for large ones. */
size_t hs_alloc_size_for(size_t size, size_t align);

/* ---- os.c: the only file that calls mmap / munmap / madvise ---- */

/* Map size bytes (multiple of 4 KiB) readable and writable, aligned to
 * align (a power of two; below 4 KiB means 4 KiB), accounted as the
 * kernel's overcommit policy says: NULL (ENOMEM) when the kernel would
 * not back that much now (heuristic: more than RAM + swap; strict: more
 * than CommitLimit leaves).  Pages are committed when first touched.
 * Thread-safe. */
void *hs_os_alloc(size_t size, size_t align);
/* Reserve size bytes of address space (multiple of 4 KiB), PROT_NONE,
 * aligned as hs_os_alloc: charged to no policy, not to be touched until
 * made writable (hs_lazy_commit).  NULL on failure.  Thread-safe. */
void *hs_os_reserve(size_t size, size_t align);

/* A reservation made writable front to back as it is used: bytes
 * [0, committed) of base are readable and writable (and accounted),
 * the rest PROT_NONE.  committed only grows; it is read with acquire by
 * code that must not touch beyond it without the owner's lock. */
typedef struct hs_lazy {
	char *base;
	size_t size;
	size_t committed;
} hs_lazy_t;
/* Reserve size bytes (rounded up to 4 KiB) aligned to align.  0 or
 * -ENOMEM. */
int hs_lazy_init(hs_lazy_t *l, size_t size, size_t align);
/* Make [0, bytes) writable, extending by a multiple of step bytes (a
 * power of two >= 4 KiB, at most up to the end).  0, or -ENOMEM when
 * bytes exceeds the reservation or the overcommit policy refuses (then
 * nothing changed).  Caller serialises calls on one l. */
int hs_lazy_commit(hs_lazy_t *l, size_t bytes, size_t step);
/* Give the pages back to the OS (MADV_DONTNEED); contents read as zero
 * afterwards.  Returns 0 or -errno. */
int hs_os_decommit(void *p, size_t size);
/* madvise(MADV_NOHUGEPAGE) / (MADV_HUGEPAGE).  Returns 0 or -errno. */
int hs_os_nohugepage(void *p, size_t size);
int hs_os_hugepage(void *p, size_t size);
void hs_os_unmap(void *p, size_t size);
/* Coarse monotonic milliseconds (CLOCK_MONOTONIC_COARSE through the vDSO:
 * no system call, 1-4 ms resolution), wrapping every 49 days: compare
 * differences only.  For the release policies' ages.  Thread-safe. */
uint32_t hs_os_coarse_ms(void);

/* ---- log.c: write(2) through a fixed buffer, no malloc, no stdio ---- */
void hs_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Tiny snprintf subset (%s %d %u %ld %lu %zu %zd %x %lx %p %%); returns
 * length written (truncated to n - 1).  Async-signal-safe. */
int hs_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int hs_snprintf(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- options.c: HEAPSCOPE_<NAME> environment options ---- */
/* One per option of option_list.h (what each one does, its default). */
typedef enum hs_option {
#define X(id, dflt, secure, arg, doc) HS_OPT_##id,
	HS_INT_OPTIONS(X)
#undef X
	HS_OPT_COUNT
} hs_option_t;
/* String-valued options (same table style, no parsing). */
typedef enum hs_str_option {
#define X(id, secure, arg, doc) HS_SOPT_##id,
	HS_STR_OPTIONS(X)
#undef X
	HS_SOPT_COUNT
} hs_str_option_t;
/* The value of a string option as the last scan found it in environ
 * (a pointer into the environment, not a copy), or NULL when unset or
 * ignored in secure-execution mode. */
const char *hs_option_string(hs_str_option_t opt);
/* Value of an option (parsed by the last scan; K/M/G suffixes). */
int64_t hs_option_get(hs_option_t opt);
/* Re-read options from environ, in secure-execution mode when
 * getauxval(AT_SECURE) says so (called lazily by the first malloc, again
 * from the library constructor in case that malloc ran before environ was
 * set).  Not thread-safe against itself: start-up only. */
void hs_options_init(void);
/* The scan behind hs_options_init: options from env (NULL-terminated;
 * NULL = none).  secure: secure-execution mode, where only the options
 * whose table entry says so are read and every other one is reset to
 * its default (options.c; docs/reliability.md).  Exposed for tests. */
void hs_options_scan(char *const *env, bool secure);

/* Current kernel thread id (cached per thread). */
uint32_t hs_gettid(void);

#endif /* HS_INTERNAL_H */
