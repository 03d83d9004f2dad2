/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/init.h - global initialisation, the library constructor,
 * fork handlers and thread-exit registration.
 */
#ifndef HS_INIT_H
#define HS_INIT_H

#include <stdbool.h>

#include "core/thread_cache.h"

extern int hs_initialised; /* 1 once hs_init_global() completed */

/*
 * Lazy global initialisation on the first malloc/free: options (defaults
 * when environ is not set yet), size classes, the thread-exit key.  Calls
 * nothing that can malloc.  Returns true when the allocator is ready.
 * Thread-safe; idempotent.
 */
bool hs_init_global(void);

/* Arranges for hs_tc_thread_exit(tc) (thread_cache.h) at thread exit. */
void hs_tc_register_exit(hs_tcache_t *tc);

#endif /* HS_INIT_H */
