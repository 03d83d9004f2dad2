// SPDX-License-Identifier: MIT
/*
 * symbolize.c - return addresses to function names with elfutils libdwfl.
 *
 * Names come from dwfl_module_addrname (.symtab, else .dynsym) on (return
 * address - 1), in the modules of the process's map (symbolize_maps.c),
 * through a per-process cache by address and the cross-process cache by
 * build id (symbolize_cache.c), both holding the demangled name
 * (demangle.c) and the mangled one; hs_syms__frame adds the module, build
 * id and source line.
 */
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize_internal.h"

static char *resolve_dwfl(struct hs_syms *s, uint64_t addr);

/* The function name of addr, demangled, and in *sys the mangled name
 * (NULL when the two are the same), through the shared cache when the
 * object has a build id (the line is looked up and cached with it). */
static char *resolve(struct hs_syms *s, uint64_t addr, char **sys)
{
	Dwarf_Addr pc = addr - 1, start;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	struct gent g;
	uint64_t bid;
	char *name, *dem;

	*sys = NULL;
	if (!mod)
		return strdup("[unknown]");
	bid = module_bid(mod, &start);
	if (gcache_get(bid, pc - start, &g)) {
		if (g.sysname && !(*sys = strdup(g.sysname)))
			return NULL;
		return strdup(g.name);
	}
	name = resolve_dwfl(s, addr);
	dem = hs_demangle(name);
	if (dem) {
		*sys = name;
		name = dem;
	}
	if (name && bid) {
		Dwfl_Line *line = dwfl_module_getsrc(mod, pc);
		const char *file = NULL;
		int lineno = 0;

		if (line)
			file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL,
					     NULL);
		if (!file || lineno <= 0) {
			file = NULL;
			lineno = 0;
		}
		gcache_put(bid, pc - start, name, *sys, file, lineno);
	}
	return name;
}

static char *resolve_dwfl(struct hs_syms *s, uint64_t addr)
{
	Dwarf_Addr pc = addr - 1, start = 0;
	const char *name, *mname, *slash;
	Dwfl_Module *mod;
	char *out = NULL;

	mod = dwfl_addrmodule(s->dwfl, pc);
	if (!mod)
		return strdup("[unknown]");
	name = dwfl_module_addrname(mod, pc);
	if (name && *name)
		return strndup(name, strcspn(name, "@")); /* drop @@GLIBC_x */
	mname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL,
				 NULL);
	if (!mname)
		return strdup("[unknown]");
	slash = strrchr(mname, '/');
	if (asprintf(&out, "%s+0x%llx", slash ? slash + 1 : mname,
		     (unsigned long long)(pc - start)) < 0)
		return NULL;
	return out;
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
	s->cache[i].name = resolve(s, addr, &s->cache[i].sysname);
	if (!s->cache[i].name) {
		free(s->cache[i].sysname);
		s->cache[i].sysname = NULL;
		return NULL;
	}
	s->cache[i].addr = addr;
	s->cused++;
	return &s->cache[i];
}

const char *hs_syms__name(void *ctx, uint64_t addr)
{
	struct cache_ent *e = lookup(ctx, addr);

	return e ? e->name : "[unknown]";
}

/* Module of `pc` with its path, range and hex build id. */
static void frame_module(Dwfl_Module *mod, struct hs_frame *f)
{
	const unsigned char *bits = NULL;
	Dwarf_Addr start = 0, end = 0;
	GElf_Addr vaddr;
	const char *name;
	int n;

	name = dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL,
				NULL);
	f->module = name;
	f->mod_start = start;
	f->mod_end = end;
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
	Dwarf_Addr pc = addr - 1;
	Dwfl_Module *mod;
	Dwfl_Line *line;
	struct cache_ent *e;

	memset(f, 0, sizeof(*f));
	if (!s || !addr)
		return -ENOENT;
	e = lookup(s, addr);
	f->function = e ? e->name : "[unknown]";
	f->system_name = e && e->sysname ? e->sysname : f->function;
	mod = dwfl_addrmodule(s->dwfl, pc);
	if (!mod)
		return -ENOENT;
	frame_module(mod, f);
	{
		Dwarf_Addr start;
		uint64_t bid = module_bid(mod, &start);
		struct gent g;

		/* lookup() just filled the shared cache for it. */
		if (gcache_get(bid, pc - start, &g)) {
			f->file = g.file;
			f->line = g.line;
			return 0;
		}
	}
	line = dwfl_module_getsrc(mod, pc);
	if (line) {
		int lineno = 0;
		const char *file =
			dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (file && lineno > 0) {
			f->file = file;
			f->line = lineno;
		}
	}
	return 0;
}
