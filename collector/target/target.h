/* SPDX-License-Identifier: MIT */
/*
 * target.h - collector/target/: the process and what the collector reads
 * of it from outside (no BPF): the object that carries the probes, its
 * USDT notes, its registry of live samples, its allocator's statistics
 * block and heap map (resident large blocks), its /proc identity, its
 * memory cgroup and how near its limit that is.  Attaching
 * the BPF programs is attach.h.  Functions return 0 or -errno unless
 * stated; none is thread-safe unless stated (the collector calls them
 * from one thread, or under the daemon's lock).
 */
#ifndef HS_TARGET_H
#define HS_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapscope/abi.h"
#include "kinds.h"

/* ------------------------------------------------------------ "find.c" */

#define HS_DEFAULT_LIB_PREFIX "libheapscope"

struct hs_target {
	pid_t pid;
	char path[PATH_MAX]; /* the object's path as the target sees it */
	char open_path[PATH_MAX + 64]; /* the same file, openable from here */
	uint64_t map_start;	   /* start of its mapping with file offset 0 */
	enum hs_provider provider; /* resolved: never AUTO after a find */
	unsigned notes;		   /* HS_NOTE_* of the object */
};

/*
 * Find the object providing the heapscope probes in /proc/PID/maps: the
 * first mapping whose file name starts with `match` (no '/'), or whose path
 * (or file name, or library name without its .so version suffix: a copy
 * libheapscope.so matches libheapscope.so.1) equals `match`'s (contains
 * '/'), or whose path is `match`'s real path; match NULL means
 * HS_DEFAULT_LIB_PREFIX; failing that, a mapped file with a heapscope
 * stapsdt note.  -ESRCH: no such process; -ENOENT: not found.
 */
int hs_target__find(struct hs_target *t, pid_t pid, const char *match);
/* The file at path in process pid's /proc/PID/maps (its mapping `range`,
 * "start-end" in hex), as openable from here: /proc/PID/map_files/RANGE
 * for a deleted file, else /proc/PID/root/PATH (another mount namespace).
 * Into out (size bytes, truncated).  Thread-safe. */
void hs_target__open_path(pid_t pid, const char *path, const char *range,
			  char *out, size_t size);
/*
 * hs_target__find for provider p.  HEAPSCOPE: as hs_target__find.  OTEL,
 * DDHEAP: the first mapped object whose name matches `match` (when given)
 * or, without `match`, the first one, that carries p's alloc probe.  AUTO:
 * HEAPSCOPE, else OTEL, else DDHEAP.  Sets t->provider and t->notes.
 * -ESRCH: no such process; -ENOENT: no object with such probes.
 */
int hs_target__find_provider(struct hs_target *t, pid_t pid, const char *match,
			     enum hs_provider p);

/* ----------------------------------------------------------- "notes.c" */

/* Probes found in an object's .note.stapsdt (hs_elf_probe_notes). */
#define HS_NOTE_HEAPSCOPE 0x01u	 /* heapscope:sample_alloc */
#define HS_NOTE_OTEL_ALLOC 0x02u /* otel_memory:alloc */
#define HS_NOTE_OTEL_FREE 0x04u	 /* otel_memory:free */
#define HS_NOTE_DD_ALLOC 0x08u	 /* ddheap:alloc */
#define HS_NOTE_DD_FREE 0x10u	 /* ddheap:free */

/* USDT programs one object gets (attach.h): heapscope's sample_free,
 * sample_alloc, rate_change, or a compatible provider's free and alloc. */
#define HS_ATTACH_MAX_PROBES 3

/* Does the ELF file at `path` carry a USDT note of provider "heapscope"? */
bool hs_elf_has_heapscope_note(const char *path);
/* HS_NOTE_* bits of the probes in the ELF file at `path` (0 if it cannot
 * be read or is not ELF).  Every note is bounds-checked: the file comes
 * from the target and is not trusted. */
unsigned hs_elf_probe_notes(const char *path);
/* Does an object with notes `notes` carry provider p's alloc probe
 * (heapscope: sample_alloc)?  And its free probe? */
bool hs_notes_have_alloc(unsigned notes, enum hs_provider p);
bool hs_notes_have_free(unsigned notes, enum hs_provider p);
/* The probes to attach to an object with these notes: p itself if the
 * object has p's alloc probe; for AUTO heapscope's, else otel_memory's,
 * else ddheap's.  AUTO = none. */
enum hs_provider hs_notes__choose(unsigned notes, enum hs_provider p);

/* -------------------------------------------------------- "registry.c" */

/* Reads len bytes at addr of the target into dst: 0 or -errno. */
typedef int (*hs_mem_read_fn)(void *ctx, uint64_t addr, void *dst, size_t len);

#define HS_REGISTRY_MAX_CAPACITY HEAPSCOPE_REGISTRY_MAX_CAPACITY /* slots */
#define HS_REGISTRY_MAX_RETRIES 16

struct hs_registry_snapshot {
	struct heapscope_registry hdr; /* validated header */
	struct heapscope_record *recs; /* live records, seq != 0 */
	size_t n;		       /* entries in recs */
	uint64_t invalid;	       /* records rejected by validation */
	unsigned retries;	       /* seqlock retries used */
	bool per_record;	       /* copied with per-record checks only */
};

/*
 * Copy the live records of the registry at `addr`, following the seqlock
 * protocol of abi.h, validating every field.  After HS_REGISTRY_MAX_RETRIES
 * unstable attempts, one last copy checks each record's seq before and
 * after (per_record = true; only valid while the probes are attached).
 * -EBADMSG: bad magic, version, sizes or bounds; -EAGAIN: no stable copy;
 * -ENOMEM; or the reader's error.
 */
int hs_registry__read(hs_mem_read_fn rd, void *rd_ctx, uint64_t addr,
		      struct hs_registry_snapshot *out);
/* Free the records of a snapshot (s itself is the caller's). */
void hs_registry__free(struct hs_registry_snapshot *s);
/* process_vm_readv reader; ctx points to a pid_t. */
int hs_registry__read_process(void *ctx, uint64_t addr, void *dst, size_t len);
/* Runtime address of `heapscope_registry` in target t (via .dynsym). */
int hs_registry__locate(const struct hs_target *t, uint64_t *addr);
/* Runtime address of the object symbol `name` of t's object (.dynsym,
 * then .symtab): -ENOENT when it has none, -ENOEXEC when not ELF. */
int hs_target__symbol(const struct hs_target *t, const char *name,
		      uint64_t *addr);
/* Read and check only the registry header at addr of live process pid
 * (magic, version, header size): -EBADMSG when wrong or short, or
 * process_vm_readv's -errno. */
int hs_registry__read_header(pid_t pid, uint64_t addr,
			     struct heapscope_registry *h);

/* ----------------------------------------------------- "stats_block.c" */

/* The allocator's statistics block (struct heapscope_stats_block, abi.h)
 * as read from outside and validated, with the thread caches summed. */
struct hs_stats_snapshot {
	uint64_t v[HEAPSCOPE_STAT_V1_COUNT]; /* counters, negatives as 0 */
	uint64_t unwind_cache_bytes;	     /* static unwind cache */
	uint64_t tcache_bytes;		     /* sum over the thread caches */
	uint64_t tcaches;		     /* caches walked */
	uint32_t class_count;		     /* size classes published */
	uint32_t version;		     /* the block's (1 or 2) */
	uint64_t heap_map_addr; /* v2: struct heapscope_heap_map, 0: none */
	unsigned retries;		     /* copies until two agreed */
	bool consistent; /* two successive copies of values[] agreed */
};

/* The most bytes a counter may claim (2^50, 1 PiB): more is corrupt. */
#define HS_STATS_MAX_VALUE (1ull << 50)
#define HS_STATS_MAX_RETRIES 8
/* Bounds on the thread-cache layout a block may describe. */
#define HS_STATS_MAX_TCACHE_BYTES 65536	    /* offsets within a cache */
#define HS_STATS_MAX_LIST_SIZE 64	    /* bytes per list */
#define HS_STATS_MAX_LIST_LENGTH (1u << 20) /* objects on one list */

/*
 * Copy and validate the statistics block at addr of a target through rd:
 * magic, version, header size, counts and offsets within the bounds
 * above, class sizes increasing, every counter <= HS_STATS_MAX_VALUE;
 * copies until two successive copies of the counters agree (at most
 * HS_STATS_MAX_RETRIES, else consistent = false); then walks the thread
 * caches (at most tcache_count of them, no address twice) and sums their
 * lists' bytes, clamped to the objects out of the central lists.
 * -EBADMSG: a field out of bounds, a cycle, a list longer than stated;
 * -ENOMEM; or the reader's error.  Thread-safe (no global state).
 */
int hs_stats_block__read(hs_mem_read_fn rd, void *rd_ctx, uint64_t addr,
			 struct hs_stats_snapshot *out);
/* Sorts v[0..n) and says whether a value is in it twice: the nodes of a
 * list walked through a target's memory (a cycle visits one twice). */
bool hs_target__has_repeat(uint64_t *v, size_t n);
/* A reader through /proc/PID/mem: ctx points to an open file descriptor
 * of it (pread; a short read is -EFAULT).  Thread-safe. */
int hs_stats_block__read_mem(void *ctx, uint64_t addr, void *dst, size_t len);

/* -------------------------------------------------------- "heap_map.c" */

/* Bounds on what a heap map may describe (more is corrupt). */
#define HS_HEAP_MAP_MAX_LARGE (1u << 22)	/* large spans on the list */
#define HS_HEAP_MAP_MAX_SPAN_PAGES (1ull << 33) /* HS_LARGE_MAX / 8 KiB */
#define HS_HEAP_MAP_MAX_REGION_PAGES (1u << 26) /* 512 GiB of 8 KiB */
#define HS_HEAP_MAP_MAX_ADDR (1ull << 57)	/* user addresses, 5-level */
/* Bytes of run entries one walk reads at most (frontier x entry size):
 * 9.6 M entries of the allocator's 28 bytes, a region used up to 73 GiB;
 * beyond it the walk is refused (-E2BIG: the counters are used), so a
 * hostile target cannot make one query read gigabytes. */
#define HS_HEAP_MAP_MAX_RUN_SCAN (256ull << 20)

/* The resident memory of a target's in-use large blocks, measured. */
struct hs_heap_resident {
	uint64_t span_bytes, span_resident; /* page-heap large spans */
	uint64_t spans;			    /* spans walked */
	uint64_t run_bytes, run_resident;   /* the region's used runs */
	uint64_t runs;			    /* used runs walked */
	uint64_t swapped;		    /* of both, pages swapped out */
	uint64_t budget;		    /* the most bytes walked */
};

/*
 * Copy and validate the heap map at addr (struct heapscope_heap_map,
 * abi.h) of a target through rd: magic, version, size, page shift 13,
 * offsets inside a span object and a run entry, counts and the region
 * inside the bounds above.  -EBADMSG when a field is out of bounds, or
 * the reader's error.  Thread-safe.
 */
int hs_heap_map__read(hs_mem_read_fn rd, void *rd_ctx, uint64_t addr,
		      struct heapscope_heap_map *m);

/*
 * Measure which pages of the in-use large blocks m describes are
 * resident: walk the page heap's large-span list (at most large_count
 * spans, no address twice) and the region's runs below its frontier
 * (read once; a run whose entry is torn by a concurrent change is
 * skipped page by page), and read each block's entries of the target's
 * /proc/PID/pagemap, open at pagemap_fd (bit 63: present; bit 62:
 * swapped).  budget: the most bytes of blocks to walk (what the
 * statistics block says is in use, with a margin: a hostile map cannot
 * make the collector read terabytes of pagemap).  Bytes into *out.
 * -EBADMSG: a span out of bounds, a cycle, a list longer than stated;
 * -E2BIG: more blocks than the budget; -EIO: pagemap unreadable; or the
 * reader's error.  Thread-safe (no global state).
 */
int hs_heap_map__resident(hs_mem_read_fn rd, void *rd_ctx, int pagemap_fd,
			  const struct heapscope_heap_map *m, uint64_t budget,
			  struct hs_heap_resident *out);

/* -------------------------------------------------------- "procinfo.c" */

struct hs_proc_info {
	pid_t pid;	     /* host (init pid namespace) */
	pid_t nspid;	     /* innermost namespace's pid (= pid if none) */
	uint64_t start_time; /* clock ticks after boot (/proc/PID/stat #22) */
	char comm[16];
	char binary[PATH_MAX]; /* /proc/PID/exe, the target's view */
	char cgroup[256];      /* cgroup v2 path, "" if unknown */
};

/* -ESRCH: no such process; -EBADMSG: unparsable /proc data. */
int hs_proc__info(pid_t pid, struct hs_proc_info *pi);
int hs_proc__start_time(pid_t pid, uint64_t *start);
/* Does process pid exist (kill(pid, 0) is not ESRCH)?  Thread-safe. */
bool hs_proc__alive(pid_t pid);

#define HS_CONTAINER_ID_LEN 64
/*
 * From a cgroup v2 path, the container id and the systemd unit:
 * id = the last path segment that is 64 lower-case hex digits, bare
 * (/docker/ID, /kubepods/.../ID) or as a runtime's scope (docker-ID.scope,
 * cri-containerd-ID.scope, crio-ID.scope, libpod-ID.scope); "" if none.
 * unit = the last segment ending in ".service"; "" if none or if it
 * does not fit in unit_size bytes.  Pure string work, thread-safe;
 * cgroup may be "".
 */
void hs_proc__cgroup_ids(const char *cgroup, char id[HS_CONTAINER_ID_LEN + 1],
			 char *unit, size_t unit_size);

/* ----------------------------------------------------------- "memcg.c" */

/* Where the memory cgroup hierarchies are mounted ("" if not). */
struct hs_memcg_mounts {
	char v1[PATH_MAX]; /* cgroup v1 with the memory controller */
	char v2[PATH_MAX]; /* cgroup2 */
};
/* A process's memory cgroup, as the collector's mount namespace sees it. */
struct hs_memcg {
	int version;	    /* 1 or 2; 0: none found */
	char path[256];	    /* in its hierarchy, e.g. "/hs-oom-123" */
	char dir[PATH_MAX]; /* the directory: mount point + path */
};

/* Fill m from /proc/self/mountinfo (the first mount of each, at the
 * hierarchy's root).  Thread-safe. */
void hs_memcg__mounts(struct hs_memcg_mounts *m);
/* The memory cgroup named by text, the contents of a /proc/PID/cgroup
 * (modified: tokenized): the memory controller's v1 line if m has v1,
 * else the unified "0::" line if m has v2.  0; -ENOENT none; -EBADMSG a
 * path that is not absolute or holds ".."; -ENAMETOOLONG.  Thread-safe. */
int hs_memcg__parse(const struct hs_memcg_mounts *m, char *text,
		    struct hs_memcg *cg);
/* hs_memcg__parse of /proc/PID/cgroup; -ESRCH no such process. */
int hs_memcg__of(const struct hs_memcg_mounts *m, pid_t pid,
		 struct hs_memcg *cg);
/* Usage and limit of cg as the OOM killer sees them: over cg and each of
 * its ancestors below the hierarchy's root, the one nearest its limit
 * (largest usage / limit).  *limit 0: no limit anywhere above ("max", or
 * >= 2^62); *usage then cg's own.  0 or -errno (cg's own files cannot be
 * read: the cgroup is gone; -EBADMSG: not a number).  Thread-safe. */
int hs_memcg__usage(const struct hs_memcg *cg, uint64_t *usage,
		    uint64_t *limit);
/* The highest usage cg itself has seen, bytes (v1
 * memory.max_usage_in_bytes, v2 memory.peak, Linux >= 5.19): what it held
 * when the OOM killer acted, read after the victim's pages are gone.  0
 * or -errno (-ENOENT: no such file, or no cgroup; -EBADMSG). */
int hs_memcg__peak(const struct hs_memcg *cg, uint64_t *peak);
/* v2: memory.pressure's "some avg10" (percent, 0..100) of cg.  0 or
 * -errno (-ENOTSUP: v1; -EBADMSG: unparsable). */
int hs_memcg__pressure(const struct hs_memcg *cg, double *avg10);

#endif /* HS_TARGET_H */
