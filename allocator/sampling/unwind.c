// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/unwind.c - stack capture for the sampled path: the
 * walks (the cached fast walk and libgcc's), and the frames skipped.  The
 * rule of a return address is unwind_cfa.c, the cache of rules
 * unwind_cache.c.
 *
 * Stacks come from the DWARF CFI (.eh_frame) of each frame, so they are
 * right in programs built with -fomit-frame-pointer.  libgcc's
 * _Unwind_Backtrace finds the FDE of every frame and interprets its CFA
 * program every time: ~150 ns per frame,
 * 3-6 us for a 20-40 frame stack.  So the walk is done here, from a cache
 * of the unwind step of each return address:
 *
 *   CFA = RSP + k or RBP + k;  RA at CFA + r;  caller's RBP at CFA + b or
 *   unchanged;  caller's RSP = CFA
 *
 * An address seen for the first time gets its FDE from libgcc
 * (_Unwind_Find_FDE) and its row is computed by a small CFA interpreter
 * that follows libgcc's semantics (execute_cfa_program, uw_update_context)
 * for that subset; after that the step is a hash probe and two loads.
 * Anything outside the subset (no FDE, signal frames, CFA or RBP by DWARF
 * expression, stack realignment through another register, unknown
 * opcodes or augmentations, code in no loaded object, e.g. JIT code with
 * __register_frame'd FDEs) is cached as "slow" and the whole stack is then
 * taken with _Unwind_Backtrace, as before.  Both walks give the same
 * return addresses (tests: build with -DHS_UNWIND_CHECK, which runs both on
 * every capture and aborts on a difference).
 *
 * The cache is global, lock-free (a seqlock per entry; a writer that
 * loses a race just does not cache), allocation-free (static, 128 KiB of
 * BSS, touched as used, a page per page of code seen).  An entry is keyed
 * by the return address and the identity of the object it lies in (its
 * GNU build ID, found with the lock-free _dl_find_object once per run of
 * frames in one object): after a dlclose, another object mapped at the
 * same address has another build ID and misses.  Objects without a build
 * ID (other than the main program) are not cached: stacks through them
 * are libgcc's.
 *
 * Nothing here allocates; anything that does while we unwind (libgcc's
 * registered-frame sorting) is served unsampled (hs_sampling_busy).
 *
 * Skipping the allocator's frames: when libheapscope is a shared object
 * (preloaded or linked, the supported cases), every leading frame whose
 * address lies in our own executable segments is skipped: that covers
 * malloc, operator new, the core's slow paths and this file, however the
 * compiler inlined them.  When the allocator is linked statically into the
 * main program our text cannot be told apart from the program's, and only
 * the two innermost frames (this function and hs_sample_alloc_slow /
 * hs_sampled_free) are skipped: stacks then start inside the allocator.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#include "base/log.h"
#include "base/os.h"
#include "heapscope/abi.h"
#include "sampling/hs_unwind.h"
#include "sampling/unwind_internal.h"

HS_TLS int hs_sampling_busy;

#define MAX_RANGES 4

static struct {
	int state; /* 0 = unknown, 1 = shared object, 2 = static (main program) */
	int nranges;
	uintptr_t lo[MAX_RANGES], hi[MAX_RANGES];
} self;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)arg;
	int hit = 0, n = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo, hi;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		lo = info->dlpi_addr + ph->p_vaddr;
		hi = lo + ph->p_memsz;
		if (me >= lo && me < hi)
			hit = 1;
		if (n < MAX_RANGES) {
			self.lo[n] = lo;
			self.hi[n] = hi;
			n++;
		}
	}
	if (!hit)
		return 0;
	self.nranges = n;
	/* The main program comes first and has an empty name. */
	return (info->dlpi_name && info->dlpi_name[0]) ? 1 : 2;
}

static void init_self(void)
{
	int r = dl_iterate_phdr(find_self, (void *)(uintptr_t)&hs_unwind_capture);

	__atomic_store_n(&self.state, r == 1 ? 1 : 2, __ATOMIC_RELEASE);
}

static int in_self(uintptr_t ip)
{
	for (int i = 0; i < self.nranges; i++)
		if (ip >= self.lo[i] && ip < self.hi[i])
			return 1;
	return 0;
}

/* ---- the libgcc walk (fallback, and the reference) ---- */

struct walk {
	uint64_t *out;
	uint32_t max, n, skip_fixed;
	int skipping;
};

static _Unwind_Reason_Code step(struct _Unwind_Context *uc, void *arg)
{
	struct walk *w = arg;
	uintptr_t ip = _Unwind_GetIP(uc);

	if (ip == 0)
		return _URC_END_OF_STACK;
	if (w->skipping) {
		if (self.state == 1 ? in_self(ip) : w->skip_fixed-- > 0)
			return _URC_NO_REASON;
		w->skipping = 0;
	}
	w->out[w->n++] = ip;
	return w->n >= w->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

#if defined(__x86_64__)

/* The objects that are never unloaded, found once each: libheapscope
 * (the first frames of every capture are ours, and its malloc is in use
 * while it is mapped) and the main program (most stacks cross it); their
 * lookup (_dl_find_object, and our build ID: ~100-200 instructions) is
 * then made once, not once per sample.  oid is stored last (release), 0
 * until found; racing threads store the same values. */
enum { IMMORTAL_SELF, IMMORTAL_MAIN, NIMMORTAL };

static struct {
	uintptr_t lo, hi;
	uint64_t oid;
} immortal[NIMMORTAL];

static uint64_t object_of(uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
	uint64_t oid;
	int main, k = -1;

	for (int i = 0; i < NIMMORTAL; i++) {
		oid = __atomic_load_n(&immortal[i].oid, __ATOMIC_ACQUIRE);
		if (!oid)
			continue;
		*lo = __atomic_load_n(&immortal[i].lo, __ATOMIC_RELAXED);
		*hi = __atomic_load_n(&immortal[i].hi, __ATOMIC_RELAXED);
		if (pc - *lo < *hi - *lo)
			return oid;
	}
	oid = hs_unwind_object_of(pc, lo, hi, &main);
	if (oid && main)
		k = IMMORTAL_MAIN;
	else if (oid && self.state == 1 && in_self(pc + 1))
		k = IMMORTAL_SELF;
	if (k >= 0 && !__atomic_load_n(&immortal[k].oid, __ATOMIC_RELAXED)) {
		__atomic_store_n(&immortal[k].lo, *lo, __ATOMIC_RELAXED);
		__atomic_store_n(&immortal[k].hi, *hi, __ATOMIC_RELAXED);
		__atomic_store_n(&immortal[k].oid, oid, __ATOMIC_RELEASE);
	}
	return oid;
}

/* The objects a walk looked rules up in (cache misses), an address in
 * each, at most MAX_LOOKED of them: their tables' pages are given back
 * after the walk (unwind_tables.c). */
#define MAX_LOOKED 4
struct looked {
	uintptr_t pc[MAX_LOOKED], lo[MAX_LOOKED];
	int n;
};

static void looked_add(struct looked *l, uintptr_t pc, uintptr_t lo)
{
	for (int i = 0; i < l->n; i++)
		if (l->lo[i] == lo)
			return;
	if (l->n < MAX_LOOKED) {
		l->pc[l->n] = pc;
		l->lo[l->n++] = lo;
	}
}

/*
 * Walk from the registers (ip, sp, bp) of hs_unwind_capture.  Returns the
 * number of frames stored, or -1: a frame outside the subset, redo the
 * stack with libgcc.  The objects whose rules were looked up go to *l.
 */
static HS_NOINLINE int fast_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp,
				 uint64_t *out, uint32_t max, struct looked *l)
{
	uint32_t n = 0, skip_fixed = 2;
	int skipping = 1;
	uintptr_t lo = 0, hi = 0;
	uint64_t oid = 0;
	struct rule r;
	/* the cache's size, once per walk (it only grows; a stale one just
	 * misses) */
	uint32_t mask =
		__atomic_load_n(&hs_unwind_cache_mask, __ATOMIC_RELAXED);

	for (;;) {
		uintptr_t cfa, kind;

		if (ip == 0)
			return (int)n;
		if (skipping) {
			if (!(self.state == 1 ? in_self(ip) : skip_fixed-- > 0))
				skipping = 0;
		}
		if (!skipping) {
			out[n++] = ip;
			if (n >= max)
				return (int)n;
		}
		/* One object lookup per run of frames in the same object. */
		if (ip - 1 - lo >= hi - lo) {
			oid = object_of(ip - 1, &lo, &hi);
			if (!oid)
				return -1;
		}
		if (HS_UNLIKELY(!hs_unwind_cache_get(ip, oid, mask, &r))) {
			r = hs_unwind_rule(ip, lo, hi);
			hs_unwind_cache_put(ip, oid, &r);
			looked_add(l, ip - 1, lo);
		}
		kind = r.flags & 0x0f;
		if (kind == RULE_LAST)
			return (int)n;
		if (kind != RULE_STEP)
			return -1;
		cfa = (r.flags & RULE_CFA_RBP ? bp : sp) + (intptr_t)r.cfa_off;
		/* A stack that does not grow towards the caller is not one the
		 * rules were made for: let libgcc decide. */
		if (HS_UNLIKELY(cfa <= sp || cfa - sp > ((uintptr_t)1 << 26) ||
				(cfa & 7)))
			return -1;
		if (r.flags & RULE_RBP_SAVED)
			bp = *(const uintptr_t *)(cfa + r.rbp_off);
		ip = *(const uintptr_t *)(cfa + r.ra_off);
		sp = cfa;
	}
}

#define HAVE_FAST_WALK 1
#endif /* __x86_64__ */

/* Inlined into hs_unwind_capture: its first frame is hs_unwind_capture
 * in both walks (the static case skips a fixed number of frames). */
static inline __attribute__((always_inline)) uint32_t
slow_walk(uint64_t *out, uint32_t max)
{
	struct walk w = { out, max, 0, 2, 1 };

	_Unwind_Backtrace(step, &w);
	return w.n;
}

#ifdef HS_UNWIND_CHECK
/* Test builds: every capture is taken both ways and compared. */
static uint64_t check_fast, check_slow;

static inline __attribute__((always_inline)) void
check(const uint64_t *out, uint32_t n, uint32_t max)
{
	uint64_t ref[HEAPSCOPE_MAX_FRAMES];
	uint32_t m;

	if (max > HEAPSCOPE_MAX_FRAMES)
		max = HEAPSCOPE_MAX_FRAMES;
	m = slow_walk(ref, max);
	if (m == n && memcmp(ref, out, n * sizeof(out[0])) == 0)
		return;
	hs_log("heapscope: unwind check: fast %u frames, libgcc %u\n", n, m);
	for (uint32_t i = 0; i < n || i < m; i++)
		hs_log("heapscope:   #%u %p %p\n", i,
		       (void *)(uintptr_t)(i < n ? out[i] : 0),
		       (void *)(uintptr_t)(i < m ? ref[i] : 0));
	abort();
}

/* HS_UNWIND_CHECK_REPORT=1: the counts at exit (tests want stderr empty). */
__attribute__((destructor)) static void check_report(void)
{
	if (!getenv("HS_UNWIND_CHECK_REPORT"))
		return;
	hs_log("heapscope: unwind check: %llu fast, %llu libgcc walks, all "
	       "equal\n", (unsigned long long)check_fast,
	       (unsigned long long)check_slow);
}
#endif

HS_NOINLINE uint32_t hs_unwind_capture(uint64_t *out, uint32_t max)
{
	uint32_t n;

	if (max == 0)
		return 0;
	if (HS_UNLIKELY(__atomic_load_n(&self.state, __ATOMIC_ACQUIRE) == 0))
		init_self();
#ifdef HAVE_FAST_WALK
	{
		uintptr_t ip, sp, bp;
		struct looked l;
		int r;

		/* RBP first (an output may be given RBP); the address after
		 * the lea plays the return address of this frame: its row
		 * (of ip - 1, inside the asm) holds at the RSP read. */
		__asm__ volatile("mov %%rbp, %0\n\t"
				 "mov %%rsp, %1\n\t"
				 "lea 0(%%rip), %2"
				 : "=r"(bp), "=r"(sp), "=r"(ip));
		l.n = 0;
		r = fast_walk(ip, sp, bp, out, max, &l);
		if (l.n)
			hs_unwind_tables_looked(l.pc, l.lo, l.n);
		else
			hs_unwind_tables_tick();
		if (r >= 0) {
#ifdef HS_UNWIND_CHECK
			__atomic_add_fetch(&check_fast, 1, __ATOMIC_RELAXED);
			check(out, (uint32_t)r, max);
#endif
			return (uint32_t)r;
		}
	}
#endif
	n = slow_walk(out, max);
#ifdef HS_UNWIND_CHECK
	__atomic_add_fetch(&check_slow, 1, __ATOMIC_RELAXED);
#endif
	return n;
}
