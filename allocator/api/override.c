/* SPDX-License-Identifier: MIT */
/*
 * allocator/api/override.c - the allocation entry points libheapscope
 * exports: the C malloc API (glibc contracts), malloc_trim, and the C++
 * operators new/delete as C functions under their Itanium-mangled names,
 * so the library needs no libstdc++ and preloads into C programs.
 * (mallinfo / mallinfo2 are with the other statistics readers,
 * api/stats_api.c.)
 *
 * operator new failure: the C++ contract is "call the new-handler, retry,
 * throw std::bad_alloc when there is none".  We cannot name those from C,
 * so on failure we look up std::get_new_handler and
 * std::__throw_bad_alloc with dlsym(RTLD_DEFAULT): a C++ program has
 * libstdc++ loaded and gets the exact semantics; without it we log and
 * abort.  The nothrow variants return NULL instead of throwing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "core/alloc.h"
#include "core/core.h"
#include "core/free.h"
#include "core/trim.h"

#define SYS_PAGE 4096UL
/* Largest supported alignment: 1 GiB and a bit more. */
#define MAX_ALIGN ((size_t)1 << 40)

static inline bool is_pow2(size_t a)
{
	return a && !(a & (a - 1));
}

/* ---- C API ---- */

HS_HOT HS_EXPORT void *malloc(size_t n)
{
	/* the slow paths set errno: the fast path needs no frame */
	return hs_malloc_inline(n);
}

HS_HOT HS_EXPORT void free(void *p)
{
	hs_free_inline(p, 0);
}

HS_HOT HS_EXPORT void *calloc(size_t count, size_t size)
{
	return hs_calloc(count, size);
}

HS_HOT HS_EXPORT void *realloc(void *p, size_t n)
{
	return hs_realloc(p, n);
}

HS_EXPORT void *reallocarray(void *p, size_t count, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(count, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return hs_realloc(p, n);
}

static void *memalign_impl(size_t align, size_t n)
{
	if (align > MAX_ALIGN) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = hs_alloc_aligned(n, align);
	if (!p)
		errno = ENOMEM;
	return p;
}

HS_HOT HS_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (!is_pow2(align) || align < sizeof(void *))
		return EINVAL;
	int saved = errno;
	void *p = memalign_impl(align, n);
	if (!p) {
		errno = saved;
		return ENOMEM;
	}
	*out = p;
	return 0;
}

HS_HOT HS_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (!is_pow2(align)) {
		errno = EINVAL;
		return NULL;
	}
	return memalign_impl(align, n);
}

HS_HOT HS_EXPORT void *memalign(size_t align, size_t n)
{
	/* glibc: a non-power-of-two alignment is rounded up */
	if (!is_pow2(align)) {
		if (align > MAX_ALIGN) {
			errno = EINVAL;
			return NULL;
		}
		size_t a = 1;
		while (a < align)
			a <<= 1;
		align = a;
	}
	return memalign_impl(align, n);
}

HS_EXPORT void *valloc(size_t n)
{
	return memalign_impl(SYS_PAGE, n);
}

HS_EXPORT void *pvalloc(size_t n)
{
	if (n > SIZE_MAX - SYS_PAGE) {
		errno = ENOMEM;
		return NULL;
	}
	n = (n + SYS_PAGE - 1) & ~(SYS_PAGE - 1);
	return memalign_impl(SYS_PAGE, n ? n : SYS_PAGE);
}

HS_HOT HS_EXPORT size_t malloc_usable_size(void *p)
{
	return hs_usable_size(p);
}

HS_HOT HS_EXPORT void free_sized(void *p, size_t size)
{
	hs_free_inline(p, size);
}

HS_HOT HS_EXPORT void free_aligned_sized(void *p, size_t align, size_t size)
{
	(void)align;
	hs_free_inline(p, size);
}

HS_EXPORT int malloc_trim(size_t pad)
{
	(void)pad;
	return hs_trim() > 0;
}

/* ---- C++ operators ---- */

typedef void (*new_handler_t)(void);

/* The new-handler loop after a failed operator new; returns the block or
 * NULL (nothrow), or throws std::bad_alloc through libstdc++. */
static HS_COLD void *new_failed(size_t n, size_t align, bool nothrow)
{
	new_handler_t (*get_handler)(void) = (new_handler_t(*)(void))dlsym(
		RTLD_DEFAULT, "_ZSt15get_new_handlerv");
	for (;;) {
		new_handler_t h = get_handler ? get_handler() : NULL;
		if (!h)
			break;
		h(); /* may throw */
		void *p =
			align > MAX_ALIGN ? NULL : hs_alloc_unsampled(n, align);
		if (p)
			return p;
	}
	if (nothrow)
		return NULL;
	void (*throw_bad_alloc)(void) =
		(void (*)(void))dlsym(RTLD_DEFAULT, "_ZSt17__throw_bad_allocv");
	if (throw_bad_alloc)
		throw_bad_alloc(); /* does not return */
	hs_log("heapscope: operator new(%zu) failed and std::bad_alloc "
	       "cannot be thrown (no libstdc++): aborting",
	       n);
	abort();
}

static inline void *op_new(size_t n)
{
	void *p = hs_malloc_inline(n);
	if (HS_UNLIKELY(!p))
		return new_failed(n, 0, false);
	return p;
}

static inline void *op_new_nothrow(size_t n)
{
	void *p = hs_malloc_inline(n);
	if (HS_UNLIKELY(!p))
		return new_failed(n, 0, true);
	return p;
}

static inline void *op_new_aligned(size_t n, size_t align, bool nothrow)
{
	void *p = align > MAX_ALIGN ? NULL : hs_alloc_aligned(n, align);
	if (HS_UNLIKELY(!p))
		return new_failed(n, align, nothrow);
	return p;
}

/* operator new(size_t), new[](size_t) */
HS_HOT HS_EXPORT void *_Znwm(size_t n)
{
	return op_new(n);
}
HS_HOT HS_EXPORT void *_Znam(size_t n)
{
	return op_new(n);
}
/* (size_t, const std::nothrow_t &) */
HS_HOT HS_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt)
{
	(void)nt;
	return op_new_nothrow(n);
}
HS_HOT HS_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *nt)
{
	(void)nt;
	return op_new_nothrow(n);
}
/* (size_t, std::align_val_t) */
HS_HOT HS_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t al)
{
	return op_new_aligned(n, al, false);
}
HS_HOT HS_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t al)
{
	return op_new_aligned(n, al, false);
}
/* (size_t, std::align_val_t, const std::nothrow_t &) */
HS_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
						   const void *nt)
{
	(void)nt;
	return op_new_aligned(n, al, true);
}
HS_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
						   const void *nt)
{
	(void)nt;
	return op_new_aligned(n, al, true);
}

/* operator delete(void *), delete[](void *) */
HS_HOT HS_EXPORT void _ZdlPv(void *p)
{
	hs_free_inline(p, 0);
}
HS_HOT HS_EXPORT void _ZdaPv(void *p)
{
	hs_free_inline(p, 0);
}
/* (void *, size_t) */
HS_HOT HS_EXPORT void _ZdlPvm(void *p, size_t n)
{
	hs_free_inline(p, n);
}
HS_HOT HS_EXPORT void _ZdaPvm(void *p, size_t n)
{
	hs_free_inline(p, n);
}
/* (void *, const std::nothrow_t &) */
HS_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt)
{
	(void)nt;
	hs_free_inline(p, 0);
}
HS_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt)
{
	(void)nt;
	hs_free_inline(p, 0);
}
/* (void *, std::align_val_t) */
HS_HOT HS_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al)
{
	(void)al;
	hs_free_inline(p, 0);
}
HS_HOT HS_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al)
{
	(void)al;
	hs_free_inline(p, 0);
}
/* (void *, size_t, std::align_val_t) */
HS_HOT HS_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al)
{
	(void)al;
	hs_free_inline(p, n);
}
HS_HOT HS_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al)
{
	(void)al;
	hs_free_inline(p, n);
}
/* (void *, std::align_val_t, const std::nothrow_t &) */
HS_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
						   const void *nt)
{
	(void)al;
	(void)nt;
	hs_free_inline(p, 0);
}
HS_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
						   const void *nt)
{
	(void)al;
	(void)nt;
	hs_free_inline(p, 0);
}
