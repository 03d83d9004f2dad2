/* SPDX-License-Identifier: MIT */
/*
 * allocator/central_freelist.h - one central free list per size class:
 * the spans of that class that still have free objects, behind one mutex
 * per class.  Thread caches move objects in and out in batches.
 */
#ifndef HS_CENTRAL_FREELIST_H
#define HS_CENTRAL_FREELIST_H

#include "size_class.h"

/*
 * Takes up to n objects of class cls; they come back as a chain linked
 * through their first word (*(void **)obj), the last link unspecified.
 * Returns how many (0 only on ENOMEM).  Thread-safe (class lock, may take
 * the page heap lock).
 */
int hs_central_remove_range(unsigned cls, void **head, int n);

/* Gives back a chain of n objects of class cls (linked as above).  Spans
 * whose objects are all back return to the page heap.  Thread-safe. */
void hs_central_insert_range(unsigned cls, void *head, int n);

/* Checker for tests: every listed span belongs to its class, is in use,
 * maps to itself and has a free or uncarved object.  1 if consistent. */
int hs_central_is_valid(void);

/* fork handlers: every class lock, ascending. */
void hs_central_lock_all(void);
void hs_central_unlock_all(void);
void hs_central_reinit(void);

#endif /* HS_CENTRAL_FREELIST_H */
