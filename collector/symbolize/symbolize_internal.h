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
 *                      the full frame (module, build id, source lines).
 *   symbolize_inline.c address -> its chain of inlined calls from DWARF
 *                      (libdw scopes), struct hs_chain.
 *   symbolize_debuginfo.c  where a module's debug info is found: the
 *                      target's /usr/lib/debug, .gnu_debuglink,
 *                      debuginfod (libdwfl's find_debuginfo callback).
 *   symbolize_offline.c  a pprof profile's raw addresses symbolized by
 *                      build id (`heapscope symbolize`).
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

/*
 * What one address symbolizes to: its source lines, innermost inlined
 * call first, l[n - 1] the function the code is in (as the symbol table
 * names it), and the folded text of the chain (outermost first, the
 * frames separated by HS_FRAME_SEP).  Immutable once built; strings owned
 * by the chain (chain_free).
 */
struct hs_chain {
	char *folded;
	bool raw;   /* no name found: the one line is "module+0xoff" */
	uint32_t n; /* >= 1 */
	struct hs_line l[];
};

struct cache_ent {
	uint64_t addr;	  /* 0 = empty */
	struct hs_chain *c;
	bool owned;	  /* c is not in the shared cache: freed with s */
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
	bool raw;	    /* --symbolize=none: modules only, no names */
	unsigned refreshes; /* maps snapshots taken after the first */
	uint64_t last_ns;   /* CLOCK_MONOTONIC of the last snapshot */
	bool stale;	    /* an unknown address waits for a snapshot */
	struct hs_mapping *mappings; /* executable file segments, sorted */
	size_t nmappings;
};

/* One entry of the cross-process cache (symbolize_cache.c). */
struct gent {
	uint64_t bid; /* hash of the build id, 0 = empty */
	uint64_t off; /* pc - module start */
	struct hs_chain *c;
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
/* The cached chain for (bid, off) (never freed: entries live until
 * exit); NULL on a miss or bid 0.  off: pc - module start, bytes.  Counts
 * a hit or a miss (bid 0: neither). */
struct hs_chain *gcache_get(uint64_t bid, uint64_t off);
/* Hand chain c for (bid, off) to the cache: returns the chain to use from
 * now on, c itself (now the cache's) or the one another thread put first
 * (then c is freed); NULL when nothing was cached (bid 0, the cache full
 * at 2^20 entries, ENOMEM): the caller keeps c. */
struct hs_chain *gcache_put(uint64_t bid, uint64_t off, struct hs_chain *c);

/*
 * symbolize_inline.c.  chain_new: the chain of pc (a call site: return
 * address - 1) in mod: the function by its symbol-table name (else its
 * DWARF name, else "module+0xoff"), the inlined calls at pc from its
 * DWARF (none without debug info).  NULL on ENOMEM.  chain_raw: the
 * one line "module+0xoff" (or "[unknown]" when mod is NULL), no DWARF
 * read.  chain_free(NULL) is a no-op.  Use mod as its hs_syms allows.
 */
struct hs_chain *chain_new(Dwfl_Module *mod, Dwarf_Addr pc);
struct hs_chain *chain_raw(Dwfl_Module *mod, Dwarf_Addr pc);
void chain_free(struct hs_chain *c);

/* symbolize_debuginfo.c: libdwfl's find_debuginfo callback (Dwfl_Callbacks)
 * for the modules of a struct hs_syms (module userdata; NULL: only
 * libdwfl's standard places).  hs_debuginfod_find: the debug file of build
 * id bits (n bytes) from the servers in DEBUGINFOD_URLS, through
 * libdebuginfod.so.1 (loaded on first use): an fd and *path (malloc'd),
 * or -ENOENT (not found, no DEBUGINFOD_URLS), -ELIBACC (no
 * libdebuginfod), -errno.  Thread-safe. */
int hs_debuginfod_find(const unsigned char *bits, int n, char **path);
/* path opened read-only if it is a regular file (never blocks on a FIFO,
 * never a device): the fd, or -1. */
int hs_open_regular(const char *path);
int hs_syms__find_debuginfo(Dwfl_Module *mod, void **userdata,
			    const char *modname, Dwarf_Addr base,
			    const char *file_name,
			    const char *debuglink_file,
			    GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif /* HS_SYMBOLIZE_INTERNAL_H */
