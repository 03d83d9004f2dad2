/* SPDX-License-Identifier: MIT */
/*
 * allocator/api/objects.h - the objects loaded in this process, for the
 * in-process profile writer (profile_write.c): their executable segments
 * (pprof mappings), build ids, real paths, and function names from each
 * object's own symbol table (objects.c).  Only for the API (never called
 * inside malloc); memory comes from mmap (base/os.c), never from malloc.
 * A struct hs_objects is used by one thread at a time.
 */
#ifndef HS_API_OBJECTS_H
#define HS_API_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HS_OBJ_MAX 512	   /* objects kept (dl_iterate_phdr order) */
#define HS_OBJ_MAX_SEGS 8  /* executable PT_LOADs kept per object */
#define HS_OBJ_PATH 4096   /* bytes, with the NUL */
#define HS_OBJ_BUILD_ID 64 /* bytes of build id kept */

/* One executable segment as /proc/self/maps shows it: page-aligned
 * [start, limit) and the file offset of start. */
struct hs_obj_seg {
	uint64_t start, limit, offset;
};

struct hs_obj_sym; /* objects.c */

struct hs_object {
	uint64_t bias; /* load bias: runtime address = bias + st_value */
	struct hs_obj_seg seg[HS_OBJ_MAX_SEGS];
	int nseg;
	bool main;		/* the program itself */
	char path[HS_OBJ_PATH]; /* real path (main: /proc/self/exe) */
	char build_id[2 * HS_OBJ_BUILD_ID + 1]; /* hex GNU build id, "" */
	/* symbol table, read from the file at the first lookup */
	int sym_state;	  /* 0 not read, 1 read, -1 none (stripped, unreadable,
			   * another build than the one loaded) */
	const char *file; /* the file's read-only mapping */
	size_t file_len;
	const struct hs_obj_sym *syms; /* functions sorted by address */
	size_t nsyms, syms_bytes;
	const char *strtab;
	size_t strtab_len;
};

struct hs_objects {
	struct hs_object *o; /* main program first */
	int n, cap;
	size_t bytes;
};

/* Fill t with the loaded objects (dl_iterate_phdr): 0, or -ENOMEM. */
int hs_objects_load(struct hs_objects *t);
/* Unmap everything t holds (the files, the tables); t is empty after. */
void hs_objects_free(struct hs_objects *t);
/* The object whose executable segment holds address pc, or NULL. */
struct hs_object *hs_objects_find(struct hs_objects *t, uint64_t pc);
/* Name of the function of object o that holds address pc, from the
 * object's .symtab (else .dynsym) on disk: a string that lives until
 * hs_objects_free, or NULL (no symbol covers pc, no table). */
const char *hs_object_symbol(struct hs_object *o, uint64_t pc);

#endif /* HS_API_OBJECTS_H */
