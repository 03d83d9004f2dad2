/* SPDX-License-Identifier: MIT */
/*
 * symbolize.h - collector/symbolize/: return addresses of a process to
 * function names, source files and lines, modules and build ids (libdwfl),
 * after the process has exited too, with the calls inlined at each
 * address (DWARF) and debug info from debug files and debuginfod; and the
 * offline symbolization of a pprof profile (`heapscope symbolize`).  What
 * its files share inside is symbolize_internal.h.  A struct hs_syms is used by one thread at a time
 * (the daemon: under its process's symbol lock); the cross-process cache
 * is thread-safe.
 */
#ifndef HS_SYMBOLIZE_H
#define HS_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Names the function of return address addr (NULL: unknown); ctx is the
 * symbolizer's (hs_syms__name: a struct hs_syms).  Where code was inlined
 * the name holds several frames, outermost first, separated by
 * HS_FRAME_SEP (folded output makes each its own frame). */
typedef const char *(*hs_symbolize_fn)(void *ctx, uint64_t addr);
#define HS_FRAME_SEP '\x1f'

/* -------------------------------------------------- "symbolize_maps.c" */

struct hs_syms;

/* Snapshot /proc/PID/maps and open the mapped files (so they can be read
 * after the process exits or from another mount namespace).  NULL when
 * the maps cannot be read (no process, no permission) or on ENOMEM;
 * hs_syms__free(NULL) is a no-op. */
struct hs_syms *hs_syms__new(pid_t pid);
void hs_syms__free(struct hs_syms *s);
/* Refresh the maps snapshot if an address lies outside it and the
 * process is still alive. */
void hs_syms__check(struct hs_syms *s, const uint64_t *addrs, size_t n);
/* hs_stack_hint_fn: hs_syms__check of the struct hs_syms syms (NULL:
 * nothing). */
void hs_syms__hint(void *syms, const uint64_t *stack, size_t n);
/* Take the refresh that hs_syms__check deferred (rate limit), if the
 * process lives: _tick once the interval has passed, _sync now. */
void hs_syms__tick(struct hs_syms *s);
void hs_syms__sync(struct hs_syms *s);
/* How many times the maps snapshot was refreshed (diagnostics). */
unsigned hs_syms__refreshes(const struct hs_syms *s);

#define HS_BUILD_ID_MAX 64 /* bytes */

/* One executable segment of a mapped file, as /proc/PID/maps gives it
 * (pprof's Mapping).  Strings live as long as the struct hs_syms. */
struct hs_mapping {
	uint64_t start, limit; /* [start, limit), addresses of the target */
	uint64_t offset;       /* file offset of start, bytes */
	const char *path;      /* target's view, without " (deleted)" */
	char build_id[2 * HS_BUILD_ID_MAX + 1]; /* GNU build-id, hex; "" */
	bool main;	       /* the process's executable (/proc/PID/exe) */
};

/* The executable file mappings of the last snapshot, sorted by start, in
 * *n (NULL s: none).  Valid until the next snapshot (hs_syms__check,
 * _tick, _sync). */
const struct hs_mapping *hs_syms__mappings(const struct hs_syms *s,
					   size_t *n);
/* Index in hs_syms__mappings of the mapping holding address pc, or -1. */
long hs_syms__mapping_at(const struct hs_syms *s, uint64_t pc);

/* ------------------------------------------------------- "symbolize.c" */

/* Lines one address has at most: innermost inlined calls beyond these are
 * dropped (the function itself is always the last). */
#define HS_INLINE_MAX 32

/* One source line of an address (pprof's Line): function, file, line. */
struct hs_line {
	const char *function;	 /* demangled */
	const char *system_name; /* as the object names it (mangled) */
	const char *file;	 /* source file, NULL without debug info */
	int line;		 /* source line, 0 = unknown */
};

/* Everything known about one return address (pprof export).  Strings live
 * as long as s (until its next maps refresh for file/module).  function,
 * system_name, file and line are those of the function the code is in
 * (lines[nlines - 1]). */
struct hs_frame {
	const char *function;	 /* as hs_syms__name (demangled) */
	const char *system_name; /* as the object names it (mangled) */
	const char *file;	 /* source file, NULL without debug info */
	int line;		 /* source line, 0 = unknown */
	const char *module;	 /* mapped object path, NULL = unknown region */
	uint64_t mod_start, mod_end;		/* module address range */
	char build_id[2 * HS_BUILD_ID_MAX + 1]; /* hex, "" = none */
	/* innermost inlined call first; nlines 0 = not symbolized
	 * (--symbolize=none: an address for pprof to symbolize later) */
	const struct hs_line *lines;
	size_t nlines;
};

/* Symbolize addr (a return address) fully; -ENOENT: no module (f->function
 * is still set). */
int hs_syms__frame(struct hs_syms *s, uint64_t addr, struct hs_frame *f);
/* Name of the function containing return address `addr` (cached; the
 * string lives as long as s): "func", "module+0xoff" or "[unknown]";
 * C++ and Rust names demangled (hs_demangle); inlined calls at addr
 * (DWARF) after it, separated by HS_FRAME_SEP. */
const char *hs_syms__name(void *s, uint64_t addr);
/* --symbolize=none (raw true): s names every address "module+0xoff" and
 * hs_syms__frame gives no lines, only the module and build id, so the
 * profile carries raw addresses for later symbolization.  Call before the
 * first lookup. */
void hs_syms__set_raw(struct hs_syms *s, bool raw);

/* -------------------------------------------------------- "demangle.c" */

/* The demangled form of a C++ (Itanium, "_Z...") or Rust (legacy "_ZN...17h
 * <hash>E", v0 "_R...") symbol name, with parameter types for C++; a new
 * malloc'd string, or NULL when name is not mangled (C names) or cannot be
 * demangled (the caller keeps name) or on ENOMEM.  Thread-safe. */
char *hs_demangle(const char *name);

/* ----------------------------------------------- "symbolize_offline.c" */

/* What hs_symbolize_pprof did: mappings seen and whose object was found
 * (by build id), locations seen and symbolized from an object. */
struct hs_symbolize_stats {
	size_t mappings, mappings_found, locations, locations_symbolized;
};

/*
 * Symbolize a pprof profile (len bytes of in, gzip'd or not) whose
 * locations have addresses and mappings with build ids: each mapping's
 * object found by build id (its file if it is still that build,
 * /usr/lib/debug/.build-id, debuginfod when DEBUGINFOD_URLS is set),
 * every location without lines given its lines (inlined calls first);
 * the rest of the profile as it was.  *out is the gzip'd profile
 * (malloc'd).  0, -EINVAL (not a profile, or a sample names a location
 * that does not exist), -EFBIG, -E2BIG (over 16 sample types), -ENOMEM.
 * Not thread-safe (libdwfl state per call, but the debuginfod client's
 * environment is the process's).
 */
int hs_symbolize_pprof(const uint8_t *in, size_t len, uint8_t **out,
		       size_t *olen, struct hs_symbolize_stats *st);

/* ------------------------------------------------- "symbolize_cache.c" */

/* The cross-process symbol cache (by build id): lookups that hit and
 * missed, entries held.  Thread-safe. */
void hs_syms__cache_stats(uint64_t *hits, uint64_t *misses, size_t *entries);

#endif /* HS_SYMBOLIZE_H */
