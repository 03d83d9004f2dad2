// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/unwind_tables.c - gives back the pages of unwind
 * tables (.eh_frame_hdr, .eh_frame) that the rule lookups of a stack
 * capture mapped.
 *
 * A return address seen for the first time gets its FDE from libgcc
 * (_Unwind_Find_FDE: a binary search of .eh_frame_hdr's table, then the
 * FDE and its CIE in .eh_frame; unwind_cfa.c), and every page it reads is
 * mapped with the 64 KiB around it (the kernel's fault-around).  Those
 * pages stayed in the process's RSS for good, a cost sampling off does
 * not have: cc1 (gcc -O2 of a 115 KB file) kept 1.8 MiB more of its own
 * file pages at the default period; small programs 40-130 KiB of
 * libc's.  They are clean pages of a private read-only file mapping, so
 * MADV_DONTNEED takes them out of the page tables at no loss: the page
 * cache keeps them and the next lookup maps them again.  The objects a
 * capture looked rules up in are noted, and their pages given back at most
 * once per RELEASE_MS, by the first capture after it (the cache of rules,
 * unwind_cache.c, makes lookups rare once a program's stacks have been
 * seen).
 *
 * Only where nothing can have written the pages: the range runs from the
 * first page wholly after the start of .eh_frame_hdr (PT_GNU_EH_FRAME) to
 * the end of the file-backed part of its PT_LOAD segment, which must be
 * neither writable nor executable (so no code, no RELRO, no data), in an
 * object without text relocations (DT_TEXTREL, DF_TEXTREL: the loader
 * writes such segments).  What follows .eh_frame there is read-only data
 * (.gcc_except_table); a page of it that the program uses faults back in.
 * The work is done inside dl_iterate_phdr's callback, under the loader's
 * lock that dlclose takes to remove an object before it unmaps it: an
 * object seen there is still mapped, so the range cannot be someone
 * else's memory by then.  Stacks taken by libgcc's walk (unwind.c's
 * fallback, which looks every frame up every time) keep their pages.
 */
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/clock.h"
#include "base/os.h"
#include "sampling/unwind_internal.h"

#if defined(__x86_64__)

#define PAGE 4096u
/* At most one release per RELEASE_MS: a lookup after a release maps its
 * pages again, 5-7 faults of 9-17 us each here (fault-around, a guest's
 * fault: bench/build/fault_cost), so releasing after every capture that
 * looked something up cost cc1 1,170 faults (~0.4 % of its time); once
 * per 100 ms bounds that cost to ~0.1 % of any program's time.  The pages mapped meanwhile are the
 * RSS sampling's stacks still cost. */
#define RELEASE_MS 100u
/* Objects with pages to give back, at most (a full set is released at
 * once). */
#define PENDING 8

struct drop {
	const uintptr_t *pc;
	int n, left;
};

/* Whether the object whose dynamic section is at dyn (PT_DYNAMIC, loaded
 * at bias) has text relocations: its read-only segments were written. */
static int has_textrel(uintptr_t bias, const ElfW(Phdr) * dyn)
{
	const ElfW(Dyn) *d = (const ElfW(Dyn) *)(bias + dyn->p_vaddr);
	size_t n = dyn->p_memsz / sizeof(*d);

	for (size_t i = 0; i < n && d[i].d_tag != DT_NULL; i++) {
		if (d[i].d_tag == DT_TEXTREL)
			return 1;
		if (d[i].d_tag == DT_FLAGS && (d[i].d_un.d_val & DF_TEXTREL))
			return 1;
	}
	return 0;
}

/* The pages of [hdr, end of its segment) wholly inside a segment that is
 * neither writable nor executable, given back. */
static void drop_tables(const struct dl_phdr_info *info, uintptr_t hdr)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, a, b;

		if (ph->p_type != PT_LOAD || (ph->p_flags & (PF_W | PF_X)) ||
		    hdr - lo >= ph->p_filesz)
			continue;
		a = (hdr + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
		b = (lo + ph->p_filesz) & ~(uintptr_t)(PAGE - 1);
		if (b > a)
			hs_os_drop_clean((const void *)a, b - a);
		return;
	}
}

static int drop_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct drop *d = arg;
	const ElfW(Phdr) *hdr = NULL, *dyn = NULL;
	int hit = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = ph;
		else if (ph->p_type == PT_DYNAMIC)
			dyn = ph;
		else if (ph->p_type == PT_LOAD)
			for (int k = 0; k < d->n; k++)
				hit += d->pc[k] - lo < ph->p_memsz;
	}
	if (!hit)
		return 0;
	if (hdr && !(dyn && has_textrel(info->dlpi_addr, dyn)))
		drop_tables(info, info->dlpi_addr + hdr->p_vaddr);
	d->left -= hit;
	return d->left <= 0; /* every object seen: stop */
}

/* Objects whose tables lookups mapped since the last release: a lookup
 * address in each (lo is the object's mapping start, its key).  A slot is
 * taken by a CAS of its lo from 0; its pc follows.  Best effort: a slot
 * the release finds with no pc yet is cleared, and the object comes back
 * with its next lookup. */
static struct {
	uintptr_t lo, pc;
} pending[PENDING];
static uint32_t npending; /* slots taken since the last release (a hint) */
static uint32_t last_ms;  /* the last release, coarse ms */

/* Gives back the tables of the pending objects. */
static void release_pending(void)
{
	uintptr_t pc[PENDING];
	int n = 0;

	__atomic_store_n(&npending, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < PENDING; i++) {
		uintptr_t p = __atomic_load_n(&pending[i].pc, __ATOMIC_ACQUIRE);

		if (__atomic_exchange_n(&pending[i].lo, 0, __ATOMIC_ACQ_REL) &&
		    p) {
			__atomic_store_n(&pending[i].pc, 0, __ATOMIC_RELAXED);
			pc[n++] = p;
		}
	}
	if (n > 0) {
		struct drop d = {pc, n, n};

		dl_iterate_phdr(drop_object, &d);
	}
}

/* true when (lo, pc) is pending now; false when every slot is taken. */
static bool add_pending(uintptr_t lo, uintptr_t pc)
{
	for (int i = 0; i < PENDING; i++) {
		uintptr_t cur =
			__atomic_load_n(&pending[i].lo, __ATOMIC_ACQUIRE);

		if (cur == lo)
			return true;
		if (cur == 0 && __atomic_compare_exchange_n(
					&pending[i].lo, &cur, lo, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&pending[i].pc, pc, __ATOMIC_RELEASE);
			__atomic_add_fetch(&npending, 1, __ATOMIC_RELAXED);
			return true;
		}
		if (cur == lo)
			return true;
	}
	return false;
}

void hs_unwind_tables_looked(const uintptr_t *pc, const uintptr_t *lo, int n)
{
	for (int i = 0; i < n; i++)
		if (!add_pending(lo[i], pc[i])) {
			release_pending();
			add_pending(lo[i], pc[i]);
		}
	hs_unwind_tables_tick();
}

void hs_unwind_tables_tick(void)
{
	uint32_t now, last;

	if (!__atomic_load_n(&npending, __ATOMIC_RELAXED))
		return;
	now = hs_clock_coarse_ms();
	last = __atomic_load_n(&last_ms, __ATOMIC_RELAXED);
	if (now - last < RELEASE_MS ||
	    !__atomic_compare_exchange_n(&last_ms, &last, now, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	release_pending();
}

#endif /* __x86_64__ */
