// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/unwind_cache.c - the cache of unwind rules, keyed by
 * return address and the identity of the object it lies in, and that
 * identity.
 *
 * The cache is global, lock-free (a seqlock per entry; a writer that
 * loses a race just does not cache), allocation-free (static, 128 KiB of
 * BSS, touched as used).  An entry is keyed by the return address and the
 * identity of the object it lies in (its GNU build ID, found with the
 * lock-free _dl_find_object once per run of frames in one object): after
 * a dlclose, another object mapped at the same address has another build
 * ID and misses.  Objects without a build ID (other than the main
 * program) are not cached: stacks through them are libgcc's.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "base/os.h"
#include "sampling/hs_unwind.h"
#include "sampling/unwind_internal.h"

#if defined(__x86_64__)

/* Page aligned so hs_unwind_trim can give its pages back. */
struct centry hs_unwind_cache[1u << CACHE_BITS] __attribute__((aligned(4096)));

size_t hs_unwind_cache_bytes(void)
{
	return sizeof(hs_unwind_cache);
}

void hs_unwind_cache_put(uintptr_t ip, uint64_t oid, const struct rule *r)
{
	struct centry *e = hs_unwind_slot_of(ip);
	uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

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
	/* a zeroed entry is an empty one (seq even, ip 0: never matches) */
	if (hs_os_decommit(hs_unwind_cache, sizeof(hs_unwind_cache)) != 0)
		return 0;
	return sizeof(hs_unwind_cache);
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
uint64_t hs_unwind_object_of(uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
	struct dl_find_object r;
	const ElfW(Ehdr) *eh;
	const ElfW(Phdr) *ph;
	uintptr_t bias;
	int i, j;

	if (_dl_find_object((void *)pc, &r) != 0 || !r.dlfo_link_map)
		return 0;
	*lo = (uintptr_t)r.dlfo_map_start;
	*hi = (uintptr_t)r.dlfo_map_end;
	/* The main program is never unloaded (and in a static program its
	 * mapping as given here may not start at its ELF header). */
	if (r.dlfo_link_map->l_name == NULL || r.dlfo_link_map->l_name[0] == 0)
		return (uint64_t)*lo << 1 | 1;
	bias = r.dlfo_link_map->l_addr;
	eh = (const ElfW(Ehdr) *)*lo;
	if (*hi - *lo < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_phentsize != sizeof(*ph) || eh->e_phoff > *hi - *lo ||
	    (*hi - *lo - eh->e_phoff) / sizeof(*ph) < eh->e_phnum)
		return 0;
	ph = (const ElfW(Phdr) *)(*lo + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		uintptr_t a = bias + ph[i].p_vaddr, e = a + ph[i].p_filesz;
		size_t al = ph[i].p_align == 8 ? 8 : 4;
		int mapped = 0;

		if (ph[i].p_type != PT_NOTE)
			continue;
		/* only notes inside a loaded segment can be read */
		for (j = 0; j < eh->e_phnum; j++)
			if (ph[j].p_type == PT_LOAD &&
			    a >= bias + ph[j].p_vaddr && e >= a &&
			    e <= bias + ph[j].p_vaddr + ph[j].p_filesz)
				mapped = 1;
		if (!mapped)
			continue;
		while (e - a >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)a;
			size_t nsz = (nh->n_namesz + al - 1) & ~(al - 1);
			size_t dsz = (nh->n_descsz + al - 1) & ~(al - 1);
			const uint8_t *d = (const uint8_t *)(nh + 1) + nsz;

			if (nsz > e - a || dsz > e - a ||
			    sizeof(*nh) + nsz + dsz > e - a)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(nh + 1, "GNU", 4) && nh->n_descsz >= 8) {
				/* A build ID is a hash already (SHA-1 by
				 * default): its first and last 8 bytes. */
				uint64_t h0, h1;

				memcpy(&h0, d, 8);
				memcpy(&h1, d + nh->n_descsz - 8, 8);
				h0 ^= (h1 << 29 | h1 >> 35) ^ nh->n_descsz;
				return h0 | 1;
			}
			a += sizeof(*nh) + nsz + dsz;
		}
	}
	return 0;
}

#endif /* __x86_64__ */
