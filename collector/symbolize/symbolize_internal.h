/* SPDX-License-Identifier: MIT */
/*
 * symbolize_internal.h - what the symbolizer's files share; the
 * hs_syms__* API itself is symbolize.h.
 *   symbolize_maps.c   the per-process module map: the /proc/PID/maps
 *                      snapshot, the mapped files opened at snapshot time,
 *                      the libdwfl modules, refresh; hs_syms__new / __free;
 *                      the executable segments as pprof mappings.
 *   symbolize_cache.c  the cross-process symbol cache, keyed by build id.
 *   symbolize.c        address -> function name (per-process cache) and
 *                      the full frame (module, build id, source line).
 *   demangle.c         C++ and Rust names demangled (hs_demangle).
 * A struct hs_syms is used by one thread at a time (not thread-safe).
 */
#ifndef HS_SYMBOLIZE_INTERNAL_H
#define HS_SYMBOLIZE_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize.h"

struct file_fd {
	char *path; /* as in maps (target's view), " (deleted)" removed */
	int fd;	    /* opened at snapshot time; -1: could not be */
	char build_id[2 * HS_BUILD_ID_MAX + 1]; /* hex, "" = none */
};

struct range {
	uint64_t start, end;
};

struct cache_ent {
	uint64_t addr; /* 0 = empty */
	char *name;    /* demangled, as people read it */
	char *sysname; /* as the object has it (mangled); NULL = name */
};

struct hs_syms {
	pid_t pid;
	char *maps; /* saved /proc/PID/maps text */
	size_t maps_len;
	struct range *ranges; /* executable file mappings, sorted */
	size_t nranges;
	struct file_fd *files;
	size_t nfiles;
	Dwfl *dwfl;
	struct cache_ent *cache;
	size_t ccap, cused;
	unsigned refreshes; /* maps snapshots taken after the first */
	uint64_t last_ns;   /* CLOCK_MONOTONIC of the last snapshot */
	bool stale;	    /* an unknown address waits for a snapshot */
	struct hs_mapping *mappings; /* executable file segments, sorted */
	size_t nmappings;
};

/* One entry of the cross-process cache (symbolize_cache.c). */
struct gent {
	uint64_t bid;	  /* hash of the build id, 0 = empty */
	uint64_t off;	  /* pc - module start */
	char *name;	  /* function, as resolve() (demangled) */
	char *sysname;	  /* mangled name, NULL = name */
	const char *file; /* interned source file or NULL */
	int line;
};

/*
 * symbolize_cache.c.  gcache_get and gcache_put are thread-safe (one
 * mutex: the daemon symbolizes different processes from different
 * threads); module_bid only reads mod (the rules of its hs_syms apply).
 *
 * module_bid: hash of mod's build id (0 without one: such objects are not
 * cached) and, in *start, the module's start address (0 if unknown).
 */
uint64_t module_bid(Dwfl_Module *mod, Dwarf_Addr *start);
/* Copy of the cached entry for (bid, off) into *out (strings shared, they
 * never move); false on a miss or bid 0.  off: pc - module start, bytes.
 * Counts a hit or a miss (bid 0: neither). */
bool gcache_get(uint64_t bid, uint64_t off, struct gent *out);
/* Cache a copy of name and sysname (NULL: same as name), and the interned
 * file (line 0 = unknown) for (bid, off); nothing for bid 0 or name NULL,
 * when the cache is full (2^20 entries) or out of memory, or when
 * (bid, off) is already there. */
void gcache_put(uint64_t bid, uint64_t off, const char *name,
		const char *sysname, const char *file, int line);

#endif /* HS_SYMBOLIZE_INTERNAL_H */
