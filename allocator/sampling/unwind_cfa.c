// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/unwind_cfa.c - the unwind rule of one return
 * address: its FDE from libgcc (_Unwind_Find_FDE), its CIE and FDE
 * programs run by a small DWARF CFA interpreter that follows libgcc's
 * semantics (extract_cie_info, execute_cfa_program, uw_update_context)
 * for the subset the fast walk can step:
 *
 *   CFA = RSP + k or RBP + k;  RA at CFA + r;  caller's RBP at CFA + b or
 *   unchanged;  caller's RSP = CFA
 *
 * Anything else (signal frames, CFA or RBP by DWARF expression, stack
 * realignment through another register, unknown opcodes or
 * augmentations) is RULE_SLOW: the whole stack is then libgcc's
 * (unwind.c).  Allocation-free.
 */
#include <stdint.h>
#include <string.h>
#include <unwind.h>

#include "sampling/unwind_internal.h"

#if defined(__x86_64__)

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
struct rule hs_unwind_rule(uintptr_t ra, uintptr_t lo, uintptr_t hi)
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

#endif /* __x86_64__ */
