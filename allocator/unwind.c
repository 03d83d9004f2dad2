// SPDX-License-Identifier: MIT
/*
 * allocator/unwind.c - stack capture for the sampled path.
 *
 * libgcc's _Unwind_Backtrace walks the DWARF CFI (.eh_frame) of each
 * frame, so stacks are right in programs built with -fomit-frame-pointer
 * (roughly 0.1 us per frame).  It does not allocate on the .eh_frame_hdr
 * path (dl_iterate_phdr + binary search); anything that does allocate
 * while we unwind is served unsampled (hs_sampling_busy).
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
#include <link.h>
#include <stdint.h>
#include <unwind.h>

#include "hs_unwind.h"

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

HS_NOINLINE uint32_t hs_unwind_capture(uint64_t *out, uint32_t max)
{
	struct walk w = { out, max, 0, 2, 1 };

	if (max == 0)
		return 0;
	if (HS_UNLIKELY(__atomic_load_n(&self.state, __ATOMIC_ACQUIRE) == 0))
		init_self();
	_Unwind_Backtrace(step, &w);
	return w.n;
}
