/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/hs_common.h - macros shared by every allocator file.
 */
#ifndef HS_COMMON_H
#define HS_COMMON_H

#define HS_LIKELY(x) __builtin_expect(!!(x), 1)
#define HS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HS_NOINLINE __attribute__((noinline))
#define HS_COLD __attribute__((cold, noinline))
/* The fast paths and the slow paths most calls reach: each starts a
 * 64-byte line, and all are together in .text.hot (the linker puts that
 * section first).  Where they fell otherwise moved with any change to the
 * library: one layout of the same code made glibc-simple (mimalloc-bench)
 * 1.95 s instead of 1.20 on this machine's AMD EPYC (code added in
 * sampling/ had moved malloc's and free's starts within their 64-byte
 * lines from 16 and 48 to 32 and 0, and every other function), and A/B
 * runs of two builds measured where their code fell as much as what
 * changed. */
#define HS_HOT __attribute__((aligned(64), section(".text.hot")))
#define HS_EXPORT __attribute__((visibility("default")))

/* A spin-wait hint to the CPU (pause / yield) for one round of a lock's
 * spin; a compiler barrier elsewhere.  No side effect. */
static inline void hs_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}
/* On the declaration of a global read by a fast path: the compiler then
 * addresses it directly (sym(%rip)) instead of loading its address from
 * the GOT, which the linker only turns into a lea, one instruction more
 * per use (the definitions are hidden already, -fvisibility=hidden). */
#define HS_HIDDEN __attribute__((visibility("hidden")))
#define HS_TLS __thread __attribute__((tls_model("initial-exec")))

/* heapscope pages: 8 KiB */
#define HS_PAGE_SHIFT 13
#define HS_PAGE_SIZE ((size_t)1 << HS_PAGE_SHIFT)
/* Largest request served from a size class; larger ones get whole spans. */
#define HS_MAX_SMALL_SIZE ((size_t)256 * 1024)
/* Default alignment of every result. */
#define HS_MIN_ALIGN 16

#endif /* HS_COMMON_H */
