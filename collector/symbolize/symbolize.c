// SPDX-License-Identifier: MIT
/*
 * symbolize.c - return addresses to function names with elfutils libdwfl.
 *
 * Names come from dwfl_module_addrname (.symtab, else .dynsym) on (return
 * address - 1), in the modules of the process's map (symbolize_maps.c),
 * with the inlined calls at that address from DWARF (symbolize_inline.c),
 * through a per-process cache by address and the cross-process cache by
 * build id (symbolize_cache.c), both holding the chain of demangled
 * (demangle.c) and mangled names with their source lines; hs_syms__frame
 * adds the module and build id.
 */
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize_internal.h"

/* The chain of addr: through the shared cache when the object has a
 * build id; *owned says whether the caller must free it. */
static struct hs_chain *resolve(struct hs_syms *s, uint64_t addr, bool *owned)
{
	Dwarf_Addr pc = addr - 1, start;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	struct hs_chain *c, *shared;
	uint64_t bid;

	*owned = true;
	if (!mod || s->raw)
		return chain_raw(mod, pc);
	bid = module_bid(mod, &start);
	c = gcache_get(bid, pc - start);
	if (c) {
		*owned = false;
		return c;
	}
	c = chain_new(mod, pc);
	if (c && (shared = gcache_put(bid, pc - start, c))) {
		*owned = false;
		return shared;
	}
	return c;
}

static size_t hash_addr(uint64_t a)
{
	a ^= a >> 31;
	a *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(a ^ (a >> 29));
}

/* The per-process cache entry of addr (filled on a miss); NULL on ENOMEM
 * or addr 0. */
static struct cache_ent *lookup(struct hs_syms *s, uint64_t addr)
{
	size_t mask, i;

	if (!addr)
		return NULL;
	if ((s->cused + 1) * 4 > s->ccap * 3) {
		size_t ncap = s->ccap * 2;
		struct cache_ent *nc = calloc(ncap, sizeof(*nc));

		if (!nc)
			return NULL;
		for (size_t j = 0; j < s->ccap; j++) {
			if (!s->cache[j].addr)
				continue;
			for (i = hash_addr(s->cache[j].addr) & (ncap - 1);
			     nc[i].addr; i = (i + 1) & (ncap - 1))
				;
			nc[i] = s->cache[j];
		}
		free(s->cache);
		s->cache = nc;
		s->ccap = ncap;
	}
	mask = s->ccap - 1;
	for (i = hash_addr(addr) & mask; s->cache[i].addr; i = (i + 1) & mask)
		if (s->cache[i].addr == addr)
			return &s->cache[i];
	s->cache[i].c = resolve(s, addr, &s->cache[i].owned);
	if (!s->cache[i].c)
		return NULL;
	s->cache[i].addr = addr;
	s->cused++;
	return &s->cache[i];
}

const char *hs_syms__name(void *ctx, uint64_t addr)
{
	struct cache_ent *e = lookup(ctx, addr);

	return e ? e->c->folded : "[unknown]";
}

void hs_syms__set_raw(struct hs_syms *s, bool raw)
{
	if (s)
		s->raw = raw;
}

/* Module of `pc` with its path, range and hex build id. */
static void frame_module(Dwfl_Module *mod, struct hs_frame *f)
{
	const unsigned char *bits = NULL;
	Dwarf_Addr start = 0, end = 0, bias;
	GElf_Addr vaddr;
	const char *name;
	int n;

	name = dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL,
				NULL);
	f->module = name;
	f->mod_start = start;
	f->mod_end = end;
	/* The build id is known once the ELF is (--symbolize=none reads
	 * nothing else of it). */
	dwfl_module_getelf(mod, &bias);
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 0 && bits) {
		if (n > HS_BUILD_ID_MAX)
			n = HS_BUILD_ID_MAX;
		for (int i = 0; i < n; i++)
			snprintf(f->build_id + 2 * i, 3, "%02x", bits[i]);
	}
}

int hs_syms__frame(struct hs_syms *s, uint64_t addr, struct hs_frame *f)
{
	const struct hs_line *fn;
	struct cache_ent *e;
	Dwfl_Module *mod;

	memset(f, 0, sizeof(*f));
	if (!s || !addr) {
		f->function = f->system_name = "[unknown]";
		return -ENOENT;
	}
	e = lookup(s, addr);
	if (e) {
		fn = &e->c->l[e->c->n - 1];
		f->function = fn->function;
		f->system_name = fn->system_name;
		f->file = fn->file;
		f->line = fn->line;
		f->lines = e->c->l;
		f->nlines = s->raw ? 0 : e->c->n;
	} else {
		f->function = f->system_name = "[unknown]";
	}
	mod = dwfl_addrmodule(s->dwfl, addr - 1);
	if (!mod)
		return -ENOENT;
	frame_module(mod, f);
	return 0;
}
