/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/options.h - the HEAPSCOPE_<NAME> environment options
 * (listed once in option_list.h; options.c: the table, read by scanning
 * environ, no getenv).
 */
#ifndef HS_OPTIONS_H
#define HS_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/option_list.h"

/* One per option of base/option_list.h (what each one does, its
 * default, written once there). */
typedef enum hs_option {
#define X(id, dflt, secure, arg, doc) HS_OPT_##id,
	HS_INT_OPTIONS(X)
#undef X
	HS_OPT_COUNT
} hs_option_t;
/* String-valued options (same table style, no parsing). */
typedef enum hs_str_option {
#define X(id, secure, arg, doc) HS_SOPT_##id,
	HS_STR_OPTIONS(X)
#undef X
	HS_SOPT_COUNT
} hs_str_option_t;

/* The value of a string option as the last scan found it in environ
 * (a pointer into the environment, not a copy), or NULL when unset or
 * ignored in secure-execution mode. */
const char *hs_option_string(hs_str_option_t opt);
/* Value of an option (parsed by the last scan; K/M/G suffixes). */
int64_t hs_option_get(hs_option_t opt);
/* Re-read options from environ, in secure-execution mode when
 * getauxval(AT_SECURE) says so (called lazily by the first malloc, again
 * from the library constructor in case that malloc ran before environ was
 * set).  Not thread-safe against itself: start-up only. */
void hs_options_init(void);
/* The scan behind hs_options_init: options from env (NULL-terminated;
 * NULL = none).  secure: secure-execution mode, where only the options
 * whose table entry says so are read and every other one is reset to
 * its default (options.c; docs/reliability.md).  Exposed for tests. */
void hs_options_scan(char *const *env, bool secure);

#endif /* HS_OPTIONS_H */
