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
 * cache keeps them and the next lookup maps them again (cc1: +6 % minor
 * faults, one madvise per capture that looked a rule up; the cache of
 * rules, unwind_cache.c, makes those rare once a program's stacks have
 * been seen).
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
#include <stdint.h>

#include "base/os.h"
#include "sampling/unwind_internal.h"

#if defined(__x86_64__)

#define PAGE 4096u

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

void hs_unwind_tables_release(const uintptr_t *pc, int n)
{
	struct drop d = {pc, n, n};

	if (n > 0)
		dl_iterate_phdr(drop_object, &d);
}

#endif /* __x86_64__ */
