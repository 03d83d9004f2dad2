/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/page_heap_internal.h - the page heap's free lists as
 * page_heap.c (the lists, allocation, coalescing), page_grow.c (growth),
 * page_huge.c (transparent huge pages) and page_release.c (the release
 * policy) share them.  Private to those four files; the page heap lock
 * is held by every caller.
 */
#ifndef HS_PAGE_HEAP_INTERNAL_H
#define HS_PAGE_HEAP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/span.h"

#define MAX_LIST 128 /* lists[k][n] holds spans of n pages, n < MAX_LIST */

enum { COMMITTED = 0, RELEASED = 1 };

/* Free spans by kind and length; [k][MAX_LIST]: >= MAX_LIST pages. */
extern hs_span_t *hs_ph_lists[2][MAX_LIST + 1];

/* ---- page_heap.c ---- */

/* Take free span s off its list (statistics follow). */
void hs_ph_list_remove(hs_span_t *s);
/* Put s (on no list) into the free lists in state loc, merged with free
 * neighbours in the same state. */
void hs_ph_free_locked(hs_span_t *s, uint8_t loc);

/* Cuts the last npages pages (fewer than s has) off free span s into a
 * span of their own, on no list, edges mapped, same state; s keeps the
 * rest and its place in the release order.  NULL without metadata. */
hs_span_t *hs_ph_split_tail_locked(hs_span_t *s, size_t npages);
/* ---- page_grow.c ---- */

/* Gets OS memory for at least npages pages into the free lists (one
 * released span, merged with its free neighbours).  false on ENOMEM. */
bool hs_ph_grow_locked(size_t npages);

/* ---- page_huge.c ---- */

/* The standard chunk ending at chunk_hi has committed [m, m + bytes):
 * once the heap's commits pass HEAPSCOPE_HUGEPAGE_AFTER, advises
 * [m, chunk_hi) MADV_HUGEPAGE (once per chunk). */
void hs_ph_huge_commit_locked(char *m, size_t bytes, char *chunk_hi);

/* A mapping of its own [m, m + bytes) (a request over a chunk): advised
 * MADV_HUGEPAGE when HEAPSCOPE_HUGEPAGE_AFTER is not negative, else
 * left on 4 KiB pages like the rest of the heap. */
void hs_ph_huge_own_locked(char *m, size_t bytes);

/* ---- page_release.c ---- */

/* Release at least `bytes` of committed free memory (SIZE_MAX: all of
 * it), oldest spans first; returns the bytes released. */
size_t hs_ph_release_locked(size_t bytes);
/* About to fault in `bytes` (a multiple of the page size) of released
 * memory: releases as much committed free memory, oldest first, the last
 * span cut to size. */
void hs_ph_release_on_fault_locked(size_t bytes);
/* The release policy, after each free into the page heap. */
void hs_ph_release_policy_locked(void);

#endif /* HS_PAGE_HEAP_INTERNAL_H */
