// SPDX-License-Identifier: MIT
/*
 * objects_victim.c - libobjects_victim.so, the library whose file on disk
 * test_objects_hostile.sh replaces by corrupted copies while it is loaded:
 * victim_alloc (exported) allocates through keep_block, a static function
 * that only the file's .symtab names.
 */
#include <stdlib.h>
#include <string.h>

static void *kept[64];

static __attribute__((noinline)) void *keep_block(size_t n, int i)
{
	void *p = malloc(n);

	if (p)
		memset(p, i, n);
	kept[i & 63] = p;
	asm volatile("" ::: "memory"); /* not a tail call */
	return p;
}

__attribute__((noinline, visibility("default"))) int victim_alloc(int n)
{
	int ok = 0;

	for (int i = 0; i < n && i < 64; i++)
		ok += keep_block(4096, i) != NULL;
	asm volatile("" ::: "memory");
	return ok;
}
