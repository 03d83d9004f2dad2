/* SPDX-License-Identifier: MIT */
/*
 * allocator/options.c - the one table of HEAPSCOPE_<NAME> options, built
 * from option_list.h (names, defaults, what each one does).
 *
 * Options are read by scanning environ directly (getenv is not safe this
 * early and may not be ready while the dynamic loader runs us).  Values
 * accept an optional sign and a K/M/G suffix (powers of 1024).  A bad
 * value warns once and keeps the default.  The first malloc may run
 * before environ is set: then every option has its default until the
 * library constructor calls hs_options_init() again.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

extern char **environ;

typedef struct option_desc {
	int64_t value;         /* current value */
	const int64_t dflt;    /* default */
	const char *const name; /* environment name */
	bool warned;           /* a bad value was reported already */
} option_desc_t;

/* Built from option_list.h, which documents each option. */
static option_desc_t options[HS_OPT_COUNT] = {
#define X(id, dflt, arg, doc) [HS_OPT_##id] = {dflt, dflt, "HEAPSCOPE_" #id, 0},
	HS_INT_OPTIONS(X)
#undef X
};

/* String options: name only, the value is used as found in environ. */
static const char *const str_options[HS_SOPT_COUNT] = {
#define X(id, arg, doc) [HS_SOPT_##id] = "HEAPSCOPE_" #id,
	HS_STR_OPTIONS(X)
#undef X
};

/* Parses s as [+-]digits[K|M|G]; returns false on any other input or on
 * overflow. */
static bool parse_int(const char *s, int64_t *out)
{
	bool neg = false;
	uint64_t v = 0;
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s++ - '0');
	}
	unsigned shift = 0;
	switch (*s) {
	case 'k': case 'K': shift = 10; s++; break;
	case 'm': case 'M': shift = 20; s++; break;
	case 'g': case 'G': shift = 30; s++; break;
	default: break;
	}
	if (*s == 'i' && shift)
		s++;
	if ((*s == 'b' || *s == 'B') && shift)
		s++;
	if (*s != '\0')
		return false;
	if (shift && v > (UINT64_MAX >> shift))
		return false;
	v <<= shift;
	if (v > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

void hs_options_init(void)
{
	char **env = environ;
	if (!env)
		return;
	for (; *env; env++) {
		const char *e = *env;
		if (strncmp(e, "HEAPSCOPE_", 10) != 0)
			continue;
		for (int i = 0; i < HS_OPT_COUNT; i++) {
			option_desc_t *o = &options[i];
			size_t len = strlen(o->name);
			if (strncmp(e, o->name, len) != 0 || e[len] != '=')
				continue;
			int64_t v;
			if (parse_int(e + len + 1, &v)) {
				__atomic_store_n(&o->value, v, __ATOMIC_RELAXED);
			} else if (!o->warned) {
				o->warned = true;
				hs_log("heapscope: bad value %s for %s, keeping "
				       "default %ld",
				       e + len + 1, o->name, (long)o->dflt);
			}
		}
	}
}

int64_t hs_option_get(hs_option_t opt)
{
	if ((unsigned)opt >= HS_OPT_COUNT)
		return 0;
	return __atomic_load_n(&options[opt].value, __ATOMIC_RELAXED);
}

const char *hs_option_string(hs_str_option_t opt)
{
	size_t len;

	if ((unsigned)opt >= HS_SOPT_COUNT || !environ)
		return NULL;
	len = strlen(str_options[opt]);
	for (char **env = environ; *env; env++)
		if (strncmp(*env, str_options[opt], len) == 0 &&
		    (*env)[len] == '=')
			return *env + len + 1;
	return NULL;
}
