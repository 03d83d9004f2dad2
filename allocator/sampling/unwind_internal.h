/* SPDX-License-Identifier: MIT */
/*
 * allocator/sampling/unwind_internal.h - what the three files of the
 * unwinder share (x86-64 only): the unwind rule of a return address
 * (computed by unwind_cfa.c), the cache of rules and the identity of the
 * object an address is in (unwind_cache.c); the walks are unwind.c.
 */
#ifndef HS_UNWIND_INTERNAL_H
#define HS_UNWIND_INTERNAL_H

#include <stdint.h>

#if defined(__x86_64__)

enum { R_RBP = 6, R_RSP = 7, R_RA = 16 };

enum rule_kind {
	RULE_NONE = 0, /* not cached */
	RULE_STEP,     /* simple: step to the caller */
	RULE_LAST,     /* simple, return address undefined: outermost frame */
	RULE_SLOW,     /* anything else: libgcc walks this stack */
};

#define RULE_CFA_RBP 0x10u   /* CFA = RBP + cfa_off (else RSP + cfa_off) */
#define RULE_RBP_SAVED 0x20u /* caller's RBP at CFA + rbp_off */

struct rule {
	int32_t cfa_off;
	int16_t ra_off, rbp_off;
	uint32_t flags; /* rule_kind | RULE_* */
};

/* ---- unwind_cfa.c ---- */

/* The rule of return address ra (the row of ra - 1), from its FDE, which
 * must lie in the object [lo, hi) the address is in: a small CFA
 * interpreter following libgcc's semantics (execute_cfa_program,
 * uw_update_context) for the subset CFA = RSP/RBP + k; RULE_SLOW for
 * anything else.  Pure but for libgcc's lock-free FDE lookup. */
struct rule hs_unwind_rule(uintptr_t ra, uintptr_t lo, uintptr_t hi);

/* ---- unwind_cache.c: the cache, return address -> rule ---- */

#define CACHE_BITS 12

struct centry {
	uint32_t seq; /* odd while written */
	uint32_t flags;
	uint64_t ip;
	uint64_t oid; /* identity of the object of ip: see hs_unwind_object_of */
	int32_t cfa_off;
	int16_t ra_off, rbp_off;
};

/* Page aligned so hs_unwind_trim can give its pages back. */
extern struct centry hs_unwind_cache[1u << CACHE_BITS];

/* The cache is 2-way set associative: ip's set is the pair of entries
 * starting at an even index.  Direct-mapped, two return addresses of
 * one stack that hashed to the same entry evicted each other on every
 * capture: a new layout of libheapscope's code did that to
 * bench/sampled_event's stack, and each miss re-ran the CFA interpreter
 * (~1,600 instructions), 6,800 instructions per sampled malloc + free
 * against 4,100.
 *
 * The set is on the cache page (of CACHE_PAGE_SETS sets) that ip's
 * 4 KiB page of code hashes to, at the place within it that ip hashes
 * to: the return addresses of one page of code share one page of the
 * cache, so a program whose sampled stacks cross a few pages of code
 * makes a few pages of the cache resident, not all 32 (every address
 * hashed over the whole cache: a one-thread program with a handful of
 * stacks, glibc-simple of mimalloc-bench, had ~100 KiB of it resident).
 * A page of code has room for 2 * CACHE_PAGE_SETS return addresses.
 *
 * The cache grows: it starts on one page (hs_unwind_cache_mask 0) and
 * doubles the pages it hashes over, up to all 32, each time the entries
 * evicted since it last grew reach a quarter of the entries it has
 * (hs_unwind_cache_put).  Hashed over all 32 from the start, the cache
 * had 29 pages (116 KiB) resident in troff (groff's formatter) for 114
 * return addresses; grown, it has 4.  A page of code goes to the page
 * picked by the top five bits of its hash, masked to the pages in use
 * (one AND on the lookup); an entry left on a page by a smaller cache is
 * still right for its address (a rule depends on the address and the
 * object only), it is just no longer found, and gets evicted. */
#define CACHE_PAGE_BITS 6 /* sets per cache page: 4096 / (2 * 32) */
#define CACHE_PAGE_SETS (1u << CACHE_PAGE_BITS)
#define CACHE_PAGES_BITS (CACHE_BITS - 1 - CACHE_PAGE_BITS) /* 32 pages */
#define CACHE_PAGES (1u << CACHE_PAGES_BITS)
_Static_assert(2 * CACHE_PAGE_SETS * sizeof(struct centry) == 4096,
	       "a cache page is a 4 KiB page");

/* The cache pages in use, minus one: 0, 1, 3, ... CACHE_PAGES - 1
 * (unwind_cache.c). */
extern uint32_t hs_unwind_cache_mask;

/* ip's set when the cache hashes over mask + 1 pages. */
static inline struct centry *hs_unwind_set_at(uintptr_t ip, uint32_t mask)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	const unsigned entry_bits = CACHE_PAGE_BITS + 1; /* entries of a page */
	/* the page (the top five bits of the code page's hash, masked) times
	 * the entries of a page, in one shift and one AND */
	uint64_t page =
		(((ip >> 12) * k) >> (64 - CACHE_PAGES_BITS - entry_bits)) &
		((uint64_t)mask << entry_bits);
	uint64_t set = (ip * k) >> (64 - CACHE_PAGE_BITS);

	return &hs_unwind_cache[page | set << 1];
}

static inline int hs_unwind_entry_get(struct centry *e, uintptr_t ip,
				      uint64_t oid, struct rule *r)
{
	uint32_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE), s2;
	uint64_t eip, eoid;

	if (s1 & 1)
		return 0;
	eip = __atomic_load_n(&e->ip, __ATOMIC_RELAXED);
	eoid = __atomic_load_n(&e->oid, __ATOMIC_RELAXED);
	r->cfa_off = __atomic_load_n(&e->cfa_off, __ATOMIC_RELAXED);
	r->ra_off = __atomic_load_n(&e->ra_off, __ATOMIC_RELAXED);
	r->rbp_off = __atomic_load_n(&e->rbp_off, __ATOMIC_RELAXED);
	r->flags = __atomic_load_n(&e->flags, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s2 = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	return s1 == s2 && eip == ip && eoid == oid && r->flags != RULE_NONE;
}

/* The cached rule of (ip, oid) into *r: 1, or 0 for none.  mask: the
 * value of hs_unwind_cache_mask, which a walk reads once.  Lock-free. */
static inline int hs_unwind_cache_get(uintptr_t ip, uint64_t oid, uint32_t mask,
				      struct rule *r)
{
	struct centry *set = hs_unwind_set_at(ip, mask);

	return hs_unwind_entry_get(&set[0], ip, oid, r) ||
	       hs_unwind_entry_get(&set[1], ip, oid, r);
}

/* Store the rule of (ip, oid); a writer that loses a race does not
 * cache.  Lock-free. */
void hs_unwind_cache_put(uintptr_t ip, uint64_t oid, const struct rule *r);

/* The identity of the object pc is in, and its mapping [*lo, *hi); 0 for
 * no object, or one that cannot be cached (unwind_cache.c).  *main: it
 * is the main program (never unloaded). */
/* A walk looked rules up in the n objects whose mappings start at lo[],
 * an address pc[] in each: their unwind tables' pages (which the lookups
 * mapped) are given back, with those of the objects noted before, at
 * most once per 100 ms (unwind_tables.c says which pages, and why that
 * loses nothing).  Takes the loader's lock (dl_iterate_phdr) when it
 * releases: call it with no allocator lock held.  Thread-safe. */
void hs_unwind_tables_looked(const uintptr_t *pc, const uintptr_t *lo, int n);
/* The release of hs_unwind_tables_looked, if one is due: after every
 * capture, so that pages noted by a walk go back within ~100 ms of the
 * next capture.  Thread-safe. */
void hs_unwind_tables_tick(void);

uint64_t hs_unwind_object_of(uintptr_t pc, uintptr_t *lo, uintptr_t *hi,
			     int *main);

#endif /* __x86_64__ */

#endif /* HS_UNWIND_INTERNAL_H */
