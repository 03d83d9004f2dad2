// SPDX-License-Identifier: MIT
/*
 * demangle.c - symbol names as people read them: C++ (Itanium ABI) and
 * Rust (legacy and v0) names demangled with libiberty's cplus_demangle
 * (binutils' and GCC's demangler, static libiberty.a from libiberty-dev).
 */
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize.h"

char *hs_demangle(const char *name)
{
	char *out;

	/* Only names in a mangling scheme: C names stay as they are (and
	 * cplus_demangle would otherwise try other, older schemes). */
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	out = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (out && !strcmp(out, name)) {
		free(out);
		return NULL;
	}
	return out;
}
