// SPDX-License-Identifier: MIT
/*
 * symbolize_inline.c - what one call site symbolizes to, as a chain of
 * source lines (struct hs_chain): the calls inlined at the address from
 * its DWARF, innermost first, then the function the code is in.
 *
 * libdw: dwfl_module_addrdie gives the compile unit of pc, dwarf_getscopes
 * the innermost scope at pc, and dwarf_getscopes_die on that DIE its
 * concrete nesting (lexical blocks, DW_TAG_inlined_subroutine instances,
 * then the DW_TAG_subprogram).  The innermost frame's file:line is the
 * line table's for pc; each inlined instance's DW_AT_call_file and
 * DW_AT_call_line are the file:line of the frame that contains it.  An
 * inlined function is named by its DW_AT_linkage_name, demangled (through
 * DW_AT_abstract_origin / DW_AT_specification), else its DW_AT_name; the
 * outermost by the symbol table, as without DWARF.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize_internal.h"

/* A line while the chain is built (strings borrowed from libdw). */
struct raw_line {
	const char *name; /* as the object spells it */
	const char *file;
	int line;
};

void chain_free(struct hs_chain *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->n; i++) {
		if (c->l[i].system_name != c->l[i].function)
			free((char *)c->l[i].system_name);
		free((char *)c->l[i].function);
		free((char *)c->l[i].file);
	}
	free(c->folded);
	free(c);
}

/* The folded text: names outermost first, HS_FRAME_SEP between, and the
 * folded format's own separators in a name replaced. */
static char *fold(const struct hs_chain *c)
{
	size_t len = 0;
	char *out, *p;

	for (uint32_t i = 0; i < c->n; i++)
		len += strlen(c->l[i].function) + 1;
	out = malloc(len);
	if (!out)
		return NULL;
	p = out;
	for (uint32_t i = c->n; i-- > 0;) {
		for (const char *q = c->l[i].function; *q; q++)
			*p++ = *q == HS_FRAME_SEP ? '_' : *q;
		*p++ = i ? HS_FRAME_SEP : '\0';
	}
	return out;
}

/* A chain of the n lines in raw (innermost first), names demangled. */
static struct hs_chain *chain_build(const struct raw_line *raw, uint32_t n)
{
	struct hs_chain *c = calloc(1, sizeof(*c) + n * sizeof(c->l[0]));

	if (!c)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		struct hs_line *l = &c->l[i];
		char *dem = hs_demangle(raw[i].name);

		c->n = i + 1;
		l->system_name = strdup(raw[i].name);
		if (!l->system_name) {
			free(dem);
			goto fail;
		}
		l->function = dem ? dem : l->system_name;
		l->line = raw[i].line > 0 ? raw[i].line : 0;
		if (raw[i].file && !(l->file = strdup(raw[i].file)))
			goto fail;
	}
	c->folded = fold(c);
	if (!c->folded)
		goto fail;
	return c;
fail:
	chain_free(c);
	return NULL;
}

/* "module+0xoff" of pc (pc - the module's start), or "[unknown]". */
static void raw_name(Dwfl_Module *mod, Dwarf_Addr pc, char *buf, size_t size)
{
	Dwarf_Addr start = 0;
	const char *m = NULL, *slash;

	if (mod)
		m = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL,
				     NULL);
	if (!m) {
		snprintf(buf, size, "[unknown]");
		return;
	}
	slash = strrchr(m, '/');
	snprintf(buf, size, "%s+0x%llx", slash ? slash + 1 : m,
		 (unsigned long long)(pc - start));
}

struct hs_chain *chain_raw(Dwfl_Module *mod, Dwarf_Addr pc)
{
	char buf[512];
	struct raw_line r = {.name = buf};
	struct hs_chain *c;

	raw_name(mod, pc, buf, sizeof(buf));
	c = chain_build(&r, 1);
	if (c)
		c->raw = true;
	return c;
}

/* The name of a function's DIE: its linkage name (mangled), else its
 * name, following DW_AT_abstract_origin and DW_AT_specification. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s;

	s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!s)
		s = dwarf_formstring(
			dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return s;
}

/*
 * The inlined calls at pc (bias-adjusted by the caller: an address in the
 * DWARF's terms) into raw[0..max): innermost first, each with the file
 * and line inside it; *file and *line come in as pc's line-table position
 * and leave as the position in the enclosing function (its call site of
 * the outermost inlined call).  *fn_die gets the DW_AT_name fallback of
 * the enclosing function.  Returns how many inlined lines.
 */
static uint32_t inlined_calls(Dwarf_Die *cu, Dwarf_Addr pc,
			      struct raw_line *raw, uint32_t max,
			      const char **file, int *line,
			      const char **fn_name)
{
	Dwarf_Die *scopes = NULL, inner;
	Dwarf_Files *files = NULL;
	uint32_t n = 0;
	int ns;

	ns = dwarf_getscopes(cu, pc, &scopes);
	if (ns <= 0) {
		free(scopes);
		return 0;
	}
	/* The innermost concrete scope, then its concrete nesting. */
	inner = scopes[0];
	free(scopes);
	scopes = NULL;
	ns = dwarf_getscopes_die(&inner, &scopes);
	if (ns <= 0) {
		free(scopes);
		return 0;
	}
	if (dwarf_getsrcfiles(cu, &files, NULL))
		files = NULL;
	for (int i = 0; i < ns; i++) {
		Dwarf_Die *d = &scopes[i];
		Dwarf_Attribute a;
		Dwarf_Word w;
		int tag = dwarf_tag(d);

		if (tag == DW_TAG_subprogram) {
			*fn_name = die_name(d);
			break;
		}
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		if (n < max) {
			raw[n].name = die_name(d);
			if (!raw[n].name)
				raw[n].name = "[inlined]";
			raw[n].file = *file;
			raw[n].line = *line;
			n++;
		} else {
			/* Too deep: keep the outermost max, lose the inner. */
			memmove(raw, raw + 1, (max - 1) * sizeof(*raw));
			raw[max - 1] = (struct raw_line){
				die_name(d) ? die_name(d) : "[inlined]", *file,
				*line};
		}
		*file = NULL;
		*line = 0;
		if (files &&
		    !dwarf_formudata(dwarf_attr(d, DW_AT_call_file, &a), &w))
			*file = dwarf_filesrc(files, w, NULL, NULL);
		if (!dwarf_formudata(dwarf_attr(d, DW_AT_call_line, &a), &w) &&
		    w <= 0x7fffffff)
			*line = (int)w;
	}
	/* scopes' DIEs are copies: the strings live in the Dwarf. */
	free(scopes);
	return n;
}

struct hs_chain *chain_new(Dwfl_Module *mod, Dwarf_Addr pc)
{
	struct raw_line raw[HS_INLINE_MAX];
	const char *file = NULL, *fn_name = NULL, *name;
	char fallback[512], sym[1024];
	Dwarf_Addr bias = 0;
	Dwfl_Line *dl;
	Dwarf_Die *cu;
	uint32_t n = 0;
	int line = 0;

	if (!mod)
		return chain_raw(NULL, pc);
	/* .symtab, else .dynsym; without its @@VERSION */
	name = dwfl_module_addrname(mod, pc);
	if (name && *name) {
		snprintf(sym, sizeof(sym), "%.*s", (int)strcspn(name, "@"),
			 name);
		name = sym;
	}
	dl = dwfl_module_getsrc(mod, pc);
	if (dl)
		file = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);
	if (!file || line <= 0) {
		file = NULL;
		line = 0;
	}
	cu = dwfl_module_addrdie(mod, pc, &bias);
	if (cu)
		n = inlined_calls(cu, pc - bias, raw, HS_INLINE_MAX - 1, &file,
				  &line, &fn_name);
	if (!name || !*name)
		name = fn_name;
	if (!n && (!name || !*name))
		return chain_raw(mod, pc);
	if (!name || !*name) {
		raw_name(mod, pc, fallback, sizeof(fallback));
		name = fallback;
	}
	raw[n++] = (struct raw_line){name, file, line};
	return chain_build(raw, n);
}
