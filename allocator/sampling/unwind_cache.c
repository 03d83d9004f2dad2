// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/unwind_cache.c - the cache of unwind rules, keyed by
 * return address and the identity of the object it lies in, and that
 * identity.
 *
 * The cache is global, lock-free (a seqlock per entry; a writer that
 * loses a race just does not cache), allocation-free (static, 128 KiB of
 * BSS, touched as used: one page to start with, doubled as entries get
 * evicted, up to all 32, unwind_internal.h hs_unwind_set_at).  An entry is
 * keyed by the return address and the identity of the object it lies in
 * (its GNU build ID, found with the
 * lock-free _dl_find_object once per run of frames in one object): after
 * a dlclose, another object mapped at the same address has another build
 * ID and misses.  Objects without a build ID (other than the main
 * program) are not cached: stacks through them are libgcc's.  Where an
 * object's build-ID note is is cached too (ocache, below; the note is
 * read and checked again on every use); libheapscope's and the main
 * program's identities are kept once and for all by unwind.c.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "base/os.h"
#include "base/stats.h"
#include "sampling/hs_unwind.h"
#include "sampling/unwind_internal.h"

#if defined(__x86_64__)

/* Page aligned so hs_unwind_trim can give its pages back. */
struct centry hs_unwind_cache[1u << CACHE_BITS] __attribute__((aligned(4096)));

uint32_t hs_unwind_cache_mask;

size_t hs_unwind_cache_bytes(void)
{
	uint32_t mask =
		__atomic_load_n(&hs_unwind_cache_mask, __ATOMIC_RELAXED);

	return ((size_t)mask + 1) * 4096;
}

/* Entries evicted, since the cache last grew, that were where the
 * current size puts them. */
static uint32_t evictions;

/* An entry of set (hashed with `mask`) holding another address, old_ip,
 * is about to be overwritten.  One placed there by a smaller cache is
 * just stale; one placed by this size is an eviction, and a quarter of
 * the cache's entries evicted doubles the pages it hashes over. */
static void note_eviction(const struct centry *set, uintptr_t old_ip,
			  uint32_t mask)
{
	if (mask == CACHE_PAGES - 1 || hs_unwind_set_at(old_ip, mask) != set)
		return;
	uint32_t n = __atomic_add_fetch(&evictions, 1, __ATOMIC_RELAXED);
	if (n < 2 * CACHE_PAGE_SETS / 4 * (mask + 1))
		return;
	if (__atomic_compare_exchange_n(&hs_unwind_cache_mask, &mask,
					2 * mask + 1, 0, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED)) {
		__atomic_store_n(&evictions, 0, __ATOMIC_RELAXED);
		hs_stats_publish_unwind(hs_unwind_cache_bytes());
	}
}

void hs_unwind_cache_put(uintptr_t ip, uint64_t oid, const struct rule *r)
{
	uint32_t mask =
		__atomic_load_n(&hs_unwind_cache_mask, __ATOMIC_RELAXED);
	struct centry *set = hs_unwind_set_at(ip, mask), *e;
	uintptr_t ip0 = __atomic_load_n(&set[0].ip, __ATOMIC_RELAXED);
	uintptr_t ip1 = __atomic_load_n(&set[1].ip, __ATOMIC_RELAXED);
	uint32_t s;

	/* ip's own entry (a stale one: another object's), else an empty
	 * one, else the way a bit of ip picks (a third address of the set
	 * evicts one of the two, always the same one) */
	if (ip0 == ip)
		e = &set[0];
	else if (ip1 == ip)
		e = &set[1];
	else if (ip0 == 0)
		e = &set[0];
	else if (ip1 == 0)
		e = &set[1];
	else {
		e = &set[(ip >> 4) & 1];
		note_eviction(set, e == set ? ip0 : ip1, mask);
	}
	s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

	if ((s & 1) || !__atomic_compare_exchange_n(&e->seq, &s, s + 1, 0,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED))
		return; /* someone else is writing it: do not cache */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->ip, ip, __ATOMIC_RELAXED);
	/* ip is stored first (x86 keeps stores in order; this keeps the
	 * compiler from moving the others before it): if hs_unwind_trim
	 * zeroes the page in the middle of this write, the stores lost are
	 * a prefix, so ip reads 0 and the entry never matches. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&e->oid, oid, __ATOMIC_RELAXED);
	__atomic_store_n(&e->cfa_off, r->cfa_off, __ATOMIC_RELAXED);
	__atomic_store_n(&e->ra_off, r->ra_off, __ATOMIC_RELAXED);
	__atomic_store_n(&e->rbp_off, r->rbp_off, __ATOMIC_RELAXED);
	__atomic_store_n(&e->flags, r->flags, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

size_t hs_unwind_trim(void)
{
	/* a zeroed entry is an empty one (seq even, ip 0: never matches);
	 * the cache starts again from one page */
	__atomic_store_n(&hs_unwind_cache_mask, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&evictions, 0, __ATOMIC_RELAXED);
	hs_stats_publish_unwind(hs_unwind_cache_bytes());
	if (hs_os_decommit(hs_unwind_cache, sizeof(hs_unwind_cache)) != 0)
		return 0;
	return sizeof(hs_unwind_cache);
}

/* The build-ID note at nh (inside a note segment ending at e, note
 * alignment al): its identity, or 0 when nh is not one. */
static uint64_t build_id_note(uintptr_t nh_at, uintptr_t e, size_t al,
			      size_t *len)
{
	const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)nh_at;
	size_t nsz, dsz;
	const uint8_t *d;
	uint64_t h0, h1;

	*len = 0;
	if (e < nh_at || e - nh_at < sizeof(*nh))
		return 0;
	nsz = (nh->n_namesz + al - 1) & ~(al - 1);
	dsz = (nh->n_descsz + al - 1) & ~(al - 1);
	if (nsz > e - nh_at || dsz > e - nh_at ||
	    sizeof(*nh) + nsz + dsz > e - nh_at)
		return 0;
	*len = sizeof(*nh) + nsz + dsz;
	d = (const uint8_t *)(nh + 1) + nsz;
	if (nh->n_type != NT_GNU_BUILD_ID || nh->n_namesz != 4 ||
	    memcmp(nh + 1, "GNU", 4) || nh->n_descsz < 8)
		return 0;
	/* A build ID is a hash already (SHA-1 by default): its first and
	 * last 8 bytes. */
	memcpy(&h0, d, 8);
	memcpy(&h1, d + nh->n_descsz - 8, 8);
	h0 ^= (h1 << 29 | h1 >> 35) ^ nh->n_descsz;
	return h0 | 1;
}

/* Is program header `note` (a PT_NOTE) inside program header `load` (a
 * PT_LOAD) of the object loaded with bias?  Only such notes can be read. */
static int note_mapped(const ElfW(Phdr) *note, const ElfW(Phdr) *load,
		       uintptr_t bias)
{
	uintptr_t a = bias + note->p_vaddr, e = a + note->p_filesz;

	return note->p_type == PT_NOTE && load->p_type == PT_LOAD &&
	       a >= bias + load->p_vaddr && e >= a &&
	       e <= bias + load->p_vaddr + load->p_filesz;
}

/*
 * Where the build ID of each recently seen object is: the search of its
 * program headers and notes was ~250 instructions per object per sampled
 * stack (most stacks cross heapscope, libc and one or two more objects),
 * a quarter of the unwind.  An entry only says which program headers and
 * note to look at; the object's headers are checked and the build ID read
 * again on every use, so an entry left by an unloaded object gives the
 * identity of whatever is mapped there now, or nothing.  Lock-free: a
 * seqlock per entry, as the rule cache (a writer that loses a race does
 * not cache).
 */
#define OCACHE_N 8

static struct ocentry {
	uint32_t seq; /* odd while written */
	uint16_t note_ph, load_ph;
	uintptr_t lo, hi, map;
	uint64_t note_off; /* of the build-ID note in its segment */
} ocache[OCACHE_N];

static struct ocentry *ocache_slot(uintptr_t lo)
{
	return &ocache[((uint64_t)lo * 0x9e3779b97f4a7c15ull) >> 61];
}

_Static_assert(OCACHE_N == 8, "ocache_slot takes 3 bits");

static int ocache_get(uintptr_t lo, uintptr_t hi, uintptr_t map,
		      struct ocentry *out)
{
	struct ocentry *e = ocache_slot(lo);
	uint32_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);

	if (s1 & 1)
		return 0;
	out->note_ph = __atomic_load_n(&e->note_ph, __ATOMIC_RELAXED);
	out->load_ph = __atomic_load_n(&e->load_ph, __ATOMIC_RELAXED);
	out->lo = __atomic_load_n(&e->lo, __ATOMIC_RELAXED);
	out->hi = __atomic_load_n(&e->hi, __ATOMIC_RELAXED);
	out->map = __atomic_load_n(&e->map, __ATOMIC_RELAXED);
	out->note_off = __atomic_load_n(&e->note_off, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == s1 &&
	       out->lo == lo && out->hi == hi && out->map == map;
}

static void ocache_put(const struct ocentry *v)
{
	struct ocentry *e = ocache_slot(v->lo);
	uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

	if ((s & 1) || !__atomic_compare_exchange_n(&e->seq, &s, s + 1, 0,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED))
		return;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->note_ph, v->note_ph, __ATOMIC_RELAXED);
	__atomic_store_n(&e->load_ph, v->load_ph, __ATOMIC_RELAXED);
	__atomic_store_n(&e->lo, v->lo, __ATOMIC_RELAXED);
	__atomic_store_n(&e->hi, v->hi, __ATOMIC_RELAXED);
	__atomic_store_n(&e->map, v->map, __ATOMIC_RELAXED);
	__atomic_store_n(&e->note_off, v->note_off, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

/*
 * The object (lo, hi: its whole mapping) that pc is in, and its identity:
 * a hash of its GNU build ID, which is what the CFI of an address depends
 * on (an object unloaded and another mapped at the same place has another
 * build ID, unless it is the same file).  Lock-free (_dl_find_object, no
 * dl_iterate_phdr: a thread holding the loader's lock at fork would leave
 * it locked in the child).  0: not in a loaded object, or an object
 * without a build ID other than the main program: not cached.
 */
uint64_t hs_unwind_object_of(uintptr_t pc, uintptr_t *lo, uintptr_t *hi,
			     int *main)
{
	struct dl_find_object r;
	const ElfW(Ehdr) *eh;
	const ElfW(Phdr) *ph;
	struct ocentry c;
	uintptr_t bias;
	uint64_t id;
	size_t len;
	int i, j;

	if (_dl_find_object((void *)pc, &r) != 0 || !r.dlfo_link_map)
		return 0;
	*lo = (uintptr_t)r.dlfo_map_start;
	*hi = (uintptr_t)r.dlfo_map_end;
	*main = 0;
	/* The main program is never unloaded (and in a static program its
	 * mapping as given here may not start at its ELF header). */
	if (r.dlfo_link_map->l_name == NULL || r.dlfo_link_map->l_name[0] == 0) {
		*main = 1;
		return (uint64_t)*lo << 1 | 1;
	}
	bias = r.dlfo_link_map->l_addr;
	eh = (const ElfW(Ehdr) *)*lo;
	if (*hi - *lo < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_phentsize != sizeof(*ph) || eh->e_phoff > *hi - *lo ||
	    (*hi - *lo - eh->e_phoff) / sizeof(*ph) < eh->e_phnum)
		return 0;
	ph = (const ElfW(Phdr) *)(*lo + eh->e_phoff);
	if (ocache_get(*lo, *hi, (uintptr_t)r.dlfo_link_map, &c) &&
	    c.note_ph < eh->e_phnum && c.load_ph < eh->e_phnum &&
	    note_mapped(&ph[c.note_ph], &ph[c.load_ph], bias) &&
	    c.note_off < ph[c.note_ph].p_filesz) {
		uintptr_t a = bias + ph[c.note_ph].p_vaddr;

		id = build_id_note(a + c.note_off, a + ph[c.note_ph].p_filesz,
				   ph[c.note_ph].p_align == 8 ? 8 : 4, &len);
		if (id)
			return id;
	}
	for (i = 0; i < eh->e_phnum; i++) {
		uintptr_t a = bias + ph[i].p_vaddr, e = a + ph[i].p_filesz;
		size_t al = ph[i].p_align == 8 ? 8 : 4;

		if (ph[i].p_type != PT_NOTE)
			continue;
		for (j = 0; j < eh->e_phnum; j++)
			if (note_mapped(&ph[i], &ph[j], bias))
				break;
		if (j == eh->e_phnum)
			continue;
		for (uintptr_t n = a; e - n >= sizeof(ElfW(Nhdr)); n += len) {
			id = build_id_note(n, e, al, &len);
			if (id) {
				c = (struct ocentry){ .note_ph = (uint16_t)i,
						      .load_ph = (uint16_t)j,
						      .lo = *lo, .hi = *hi,
						      .map = (uintptr_t)r.dlfo_link_map,
						      .note_off = n - a };
				ocache_put(&c);
				return id;
			}
			if (!len)
				break;
		}
	}
	return 0;
}

#endif /* __x86_64__ */
