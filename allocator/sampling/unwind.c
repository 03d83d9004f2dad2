// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/unwind.c - stack capture for the sampled path.
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
 * BSS, touched as used).  An entry is keyed by the return address and the
 * identity of the object it lies in (its GNU build ID, found with the
 * lock-free _dl_find_object once per run of frames in one object): after
 * a dlclose, another object mapped at the same address has another build
 * ID and misses.  Objects without a build ID (other than the main
 * program) are not cached: stacks through them are libgcc's.
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

/* ---- the unwind-step rule of one return address ---- */

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

/* Register rules, as libgcc's frame_state_reg_info (REG_UNSAVED, ...). */
enum { H_UNSAVED = 0, H_OFFSET, H_UNDEFINED, H_OTHER };
enum { CFA_UNSET = 0, CFA_REG_OFFSET, CFA_OTHER };

struct regs {
	int cfa_how;
	uint64_t cfa_reg;
	int64_t cfa_off;
	int how[2]; /* [0] = RBP, [1] = RA */
	int64_t off[2];
};

#define MAX_REMEMBER 8

struct cfa_prog {
	struct regs r;
	struct regs stack[MAX_REMEMBER];
	int depth;
	uint64_t code_align;
	int64_t data_align;
	uintptr_t loc;
};

/* One LEB128 number from [p, end): its low 64 bits in *v, the bits read in
 * *shift, the sign bit (0x40 of the last byte) in *neg.  Returns the byte
 * after it, or NULL when it runs past end. */
static const uint8_t *leb(const uint8_t *p, const uint8_t *end, uint64_t *v,
			  unsigned *shift, int *neg)
{
	uint64_t r = 0;
	unsigned sh = 0;

	while (p < end) {
		uint8_t b = *p++;

		if (sh < 64)
			r |= (uint64_t)(b & 0x7f) << sh;
		sh += 7;
		if (!(b & 0x80)) {
			*v = r;
			*shift = sh;
			*neg = !!(b & 0x40);
			return p;
		}
	}
	return NULL;
}

static const uint8_t *uleb(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	unsigned shift;
	int neg;

	return leb(p, end, v, &shift, &neg);
}

static const uint8_t *sleb(const uint8_t *p, const uint8_t *end, int64_t *v)
{
	uint64_t r;
	unsigned shift;
	int neg;

	p = leb(p, end, &r, &shift, &neg);
	if (p && neg && shift < 64)
		r |= ~(uint64_t)0 << shift;
	if (p)
		*v = (int64_t)r;
	return p;
}

/* Size of a DW_EH_PE-encoded value; 0 = unsupported (aligned, omit...). */
static size_t enc_size(uint8_t enc, const uint8_t *p, const uint8_t *end)
{
	uint64_t v;
	const uint8_t *q;

	if ((enc & 0x70) == 0x50) /* DW_EH_PE_aligned */
		return 0;
	switch (enc & 0x0f) {
	case 0x00: return 8; /* absptr */
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	case 0x04: case 0x0c: return 8;
	case 0x01: /* uleb128 */
	case 0x09: /* sleb128 */
		q = uleb(p, end, &v);
		return q ? (size_t)(q - p) : 0;
	default: return 0;
	}
}

/* Column of a register we track: 0 = RBP, 1 = RA, -1 = not tracked. */
static int col(uint64_t reg)
{
	return reg == R_RBP ? 0 : reg == R_RA ? 1 : -1;
}

static void set_how(struct cfa_prog *s, uint64_t reg, int how, int64_t off)
{
	int c = col(reg);

	if (c < 0)
		return;
	s->r.how[c] = how;
	s->r.off[c] = off;
}

/*
 * libgcc's execute_cfa_program for the rows before ra (insn at
 * loc < ra): 0 done, -1 outside the subset.
 */
static int run_cfa(struct cfa_prog *s, const uint8_t *p, const uint8_t *end,
		   uintptr_t ra)
{
	uint64_t reg = 0, u = 0;
	int64_t sv = 0;

	while (p && p < end && s->loc < ra) {
		uint8_t insn = *p++;

		switch (insn & 0xc0) {
		case 0x40: /* DW_CFA_advance_loc */
			s->loc += (insn & 0x3f) * s->code_align;
			continue;
		case 0x80: /* DW_CFA_offset */
			p = uleb(p, end, &u);
			set_how(s, insn & 0x3f, H_OFFSET,
				(int64_t)u * s->data_align);
			continue;
		case 0xc0: /* DW_CFA_restore: libgcc makes it REG_UNSAVED */
			if ((insn & 0x3f) == R_RA)
				return -1;
			set_how(s, insn & 0x3f, H_UNSAVED, 0);
			continue;
		}
		switch (insn) {
		case 0x00: /* nop */
			break;
		case 0x02: /* advance_loc1 */
			if (p + 1 > end)
				return -1;
			s->loc += p[0] * s->code_align;
			p += 1;
			break;
		case 0x03: { /* advance_loc2 */
			uint16_t d;

			if (p + 2 > end)
				return -1;
			memcpy(&d, p, 2);
			s->loc += d * s->code_align;
			p += 2;
			break;
		}
		case 0x04: { /* advance_loc4 */
			uint32_t d;

			if (p + 4 > end)
				return -1;
			memcpy(&d, p, 4);
			s->loc += d * s->code_align;
			p += 4;
			break;
		}
		case 0x05: /* offset_extended */
			p = uleb(p, end, &reg);
			if (p)
				p = uleb(p, end, &u);
			set_how(s, reg, H_OFFSET, (int64_t)u * s->data_align);
			break;
		case 0x11: /* offset_extended_sf */
			p = uleb(p, end, &reg);
			if (p)
				p = sleb(p, end, &sv);
			set_how(s, reg, H_OFFSET, sv * s->data_align);
			break;
		case 0x06: /* restore_extended */
			p = uleb(p, end, &reg);
			if (reg == R_RA)
				return -1;
			set_how(s, reg, H_UNSAVED, 0);
			break;
		case 0x07: /* undefined */
			p = uleb(p, end, &reg);
			set_how(s, reg, H_UNDEFINED, 0);
			break;
		case 0x08: /* same_value */
			p = uleb(p, end, &reg);
			set_how(s, reg, H_UNSAVED, 0);
			break;
		case 0x09: /* register */
			p = uleb(p, end, &reg);
			if (p)
				p = uleb(p, end, &u);
			set_how(s, reg, H_OTHER, 0);
			break;
		case 0x0a: /* remember_state */
			if (s->depth >= MAX_REMEMBER)
				return -1;
			s->stack[s->depth++] = s->r;
			break;
		case 0x0b: /* restore_state (CFA included, as libgcc) */
			if (s->depth == 0)
				return -1;
			s->r = s->stack[--s->depth];
			break;
		case 0x0c: /* def_cfa */
			p = uleb(p, end, &reg);
			if (p)
				p = uleb(p, end, &u);
			s->r.cfa_reg = reg;
			s->r.cfa_off = (int64_t)u;
			s->r.cfa_how = CFA_REG_OFFSET;
			break;
		case 0x12: /* def_cfa_sf */
			p = uleb(p, end, &reg);
			if (p)
				p = sleb(p, end, &sv);
			s->r.cfa_reg = reg;
			s->r.cfa_off = sv * s->data_align;
			s->r.cfa_how = CFA_REG_OFFSET;
			break;
		case 0x0d: /* def_cfa_register */
			p = uleb(p, end, &reg);
			s->r.cfa_reg = reg;
			s->r.cfa_how = CFA_REG_OFFSET;
			break;
		case 0x0e: /* def_cfa_offset (cfa_how deliberately not set) */
			p = uleb(p, end, &u);
			s->r.cfa_off = (int64_t)u;
			break;
		case 0x13: /* def_cfa_offset_sf */
			p = sleb(p, end, &sv);
			s->r.cfa_off = sv * s->data_align;
			break;
		case 0x0f: /* def_cfa_expression */
			p = uleb(p, end, &u);
			if (!p || u > (uint64_t)(end - p))
				return -1;
			p += u;
			s->r.cfa_how = CFA_OTHER;
			break;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			p = uleb(p, end, &reg);
			if (p)
				p = uleb(p, end, &u);
			if (!p || u > (uint64_t)(end - p))
				return -1;
			p += u;
			set_how(s, reg, H_OTHER, 0);
			break;
		case 0x14: /* val_offset */
			p = uleb(p, end, &reg);
			if (p)
				p = uleb(p, end, &u);
			set_how(s, reg, H_OTHER, 0);
			break;
		case 0x15: /* val_offset_sf */
			p = uleb(p, end, &reg);
			if (p)
				p = sleb(p, end, &sv);
			set_how(s, reg, H_OTHER, 0);
			break;
		case 0x2e: /* GNU_args_size */
			p = uleb(p, end, &u);
			break;
		default: /* set_loc, GNU_window_save, negative_offset, ... */
			return -1;
		}
	}
	return p ? 0 : -1;
}

/* Not in any public header; exported by libgcc_s (GCC_3.0) and libgcc_eh. */
struct dwarf_eh_bases {
	void *tbase, *dbase, *func;
};
extern const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

/* The rule of return address ra (the row of ra - 1), from its FDE, which
 * must lie in the object [lo, hi) the address is in. */
static struct rule compute_rule(uintptr_t ra, uintptr_t lo, uintptr_t hi)
{
	struct rule slow = { 0, 0, 0, RULE_SLOW }, out = { 0, 0, 0, 0 };
	struct dwarf_eh_bases bases;
	const uint8_t *fde, *cie, *p, *end, *cend, *aug, *augdata = NULL;
	uint32_t len, cie_off;
	uint8_t fde_enc = 0; /* DW_EH_PE_absptr */
	uint64_t u = 0, ra_col = 0, auglen = 0;
	int has_z = 0, version;
	size_t n;
	static struct cfa_prog zero;
	struct cfa_prog s = zero;

	/* The object's own .eh_frame only, not frames registered at run
	 * time (__register_frame, JIT), which can change under the same
	 * address and object. */
	fde = _Unwind_Find_FDE((void *)(ra - 1), &bases);
	if (!fde || (uintptr_t)fde < lo || (uintptr_t)fde >= hi)
		return slow;
	memcpy(&len, fde, 4);
	if (len == 0 || len == 0xffffffffu)
		return slow;
	end = fde + 4 + len;
	memcpy(&cie_off, fde + 4, 4);
	cie = fde + 4 - cie_off;
	if ((uintptr_t)cie < lo || (uintptr_t)cie >= hi)
		return slow;

	/* CIE: libgcc's extract_cie_info. */
	memcpy(&len, cie, 4);
	if (len == 0 || len == 0xffffffffu)
		return slow;
	cend = cie + 4 + len;
	version = cie[8];
	if (version != 1 && version != 3)
		return slow;
	aug = cie + 9;
	p = memchr(aug, 0, (size_t)(cend - aug));
	if (!p)
		return slow;
	p++;
	p = uleb(p, cend, &s.code_align);
	if (p)
		p = sleb(p, cend, &s.data_align);
	if (!p)
		return slow;
	if (version == 1) {
		ra_col = *p++;
	} else {
		p = uleb(p, cend, &ra_col);
		if (!p)
			return slow;
	}
	if (ra_col != R_RA)
		return slow;
	if (*aug == 'z') {
		has_z = 1;
		p = uleb(p, cend, &auglen);
		if (!p || auglen > (uint64_t)(cend - p))
			return slow;
		augdata = p;
		for (aug++; *aug; aug++) {
			if (*aug == 'L') {
				p++;
			} else if (*aug == 'R') {
				fde_enc = *p++;
			} else if (*aug == 'P') {
				n = enc_size(*p, p + 1, cend);
				if (!n)
					return slow;
				p += 1 + n;
			} else {
				return slow; /* 'S' (signal frame), ... */
			}
		}
		p = augdata + auglen;
	} else if (*aug) {
		return slow;
	}

	s.loc = (uintptr_t)bases.func;
	if (run_cfa(&s, p, cend, ra) != 0)
		return slow;

	/* FDE: pc_begin, pc_range, augmentation, instructions. */
	p = fde + 8;
	n = enc_size(fde_enc, p, end);
	if (!n)
		return slow;
	p += n;
	n = enc_size(fde_enc & 0x0f, p, end);
	if (!n)
		return slow;
	p += n;
	if (has_z) {
		p = uleb(p, end, &u);
		if (!p || u > (uint64_t)(end - p))
			return slow;
		p += u;
	}
	if (run_cfa(&s, p, end, ra) != 0)
		return slow;

	/* The subset: CFA = RSP/RBP + k, RA saved, RBP saved or kept. */
	if (s.r.cfa_how != CFA_REG_OFFSET ||
	    (s.r.cfa_reg != R_RSP && s.r.cfa_reg != R_RBP) ||
	    s.r.cfa_off < INT32_MIN || s.r.cfa_off > INT32_MAX)
		return slow;
	out.cfa_off = (int32_t)s.r.cfa_off;
	if (s.r.cfa_reg == R_RBP)
		out.flags |= RULE_CFA_RBP;
	if (s.r.how[1] == H_UNDEFINED) {
		out.flags |= RULE_LAST;
		return out;
	}
	if (s.r.how[1] != H_OFFSET || s.r.off[1] < INT16_MIN ||
	    s.r.off[1] > INT16_MAX)
		return slow;
	out.ra_off = (int16_t)s.r.off[1];
	if (s.r.how[0] == H_OFFSET) {
		if (s.r.off[0] < INT16_MIN || s.r.off[0] > INT16_MAX)
			return slow;
		out.rbp_off = (int16_t)s.r.off[0];
		out.flags |= RULE_RBP_SAVED;
	} else if (s.r.how[0] != H_UNSAVED) {
		return slow;
	}
	out.flags |= RULE_STEP;
	return out;
}

/* ---- the cache: return address -> rule ---- */

#define CACHE_BITS 12

struct centry {
	uint32_t seq; /* odd while written */
	uint32_t flags;
	uint64_t ip;
	uint64_t oid; /* identity of the object of ip: see object_of */
	int32_t cfa_off;
	int16_t ra_off, rbp_off;
};

/* Page aligned so hs_unwind_trim can give its pages back. */
static struct centry cache[1u << CACHE_BITS] __attribute__((aligned(4096)));

static inline struct centry *slot_of(uintptr_t ip)
{
	return &cache[(ip * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS)];
}

static inline int cache_get(uintptr_t ip, uint64_t oid, struct rule *r)
{
	struct centry *e = slot_of(ip);
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

static void cache_put(uintptr_t ip, uint64_t oid, const struct rule *r)
{
	struct centry *e = slot_of(ip);
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
	if (hs_os_decommit(cache, sizeof(cache)) != 0)
		return 0;
	return sizeof(cache);
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
static uint64_t object_of(uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
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

/*
 * Walk from the registers (ip, sp, bp) of hs_unwind_capture.  Returns the
 * number of frames stored, or -1: a frame outside the subset, redo the
 * stack with libgcc.
 */
static HS_NOINLINE int fast_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp,
				 uint64_t *out, uint32_t max)
{
	uint32_t n = 0, skip_fixed = 2;
	int skipping = 1;
	uintptr_t lo = 0, hi = 0;
	uint64_t oid = 0;
	struct rule r;

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
		if (HS_UNLIKELY(!cache_get(ip, oid, &r))) {
			r = compute_rule(ip, lo, hi);
			cache_put(ip, oid, &r);
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
		int r;

		/* RBP first (an output may be given RBP); the address after
		 * the lea plays the return address of this frame: its row
		 * (of ip - 1, inside the asm) holds at the RSP read. */
		__asm__ volatile("mov %%rbp, %0\n\t"
				 "mov %%rsp, %1\n\t"
				 "lea 0(%%rip), %2"
				 : "=r"(bp), "=r"(sp), "=r"(ip));
		r = fast_walk(ip, sp, bp, out, max);
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
