/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/options.c - the one table of HEAPSCOPE_<NAME> options,
 * built from base/option_list.h (names, defaults, what each one does).
 *
 * Options are read by scanning environ directly (getenv is not safe this
 * early and may not be ready while the dynamic loader runs us).  Values
 * accept an optional sign and a K/M/G suffix (powers of 1024).  A bad
 * value warns once and keeps the default.  The first malloc may run
 * before environ is set: then every option has its default until the
 * library constructor calls hs_options_init() again.
 *
 * Secure-execution mode (getauxval(AT_SECURE): a setuid or setgid program,
 * or one that gained file capabilities): the environment was written by a
 * less privileged caller, so an option honoured there would let that
 * caller steer a privileged process.  Each option says in its table entry
 * whether it is honoured then (`secure`); the scan below is the only place
 * that decides, and an option not honoured keeps its default silently, as
 * glibc ignores MALLOC_* and the glibc.malloc tunables in that mode.
 * docs/reliability.md has the table and the reasons.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include "base/log.h"
#include "base/options.h"

extern char **environ;

typedef struct option_desc {
	int64_t value;         /* current value */
	const int64_t dflt;    /* default */
	const char *const name; /* environment name */
	const bool secure;     /* honoured in secure-execution mode */
	bool warned;           /* a bad value was reported already */
} option_desc_t;

typedef struct str_option_desc {
	const char *value;      /* as found in environ by the last scan */
	const char *const name; /* environment name */
	const bool secure;      /* honoured in secure-execution mode */
} str_option_desc_t;

/* Built from option_list.h, which documents each option and says why none
 * is honoured in secure-execution mode. */
static option_desc_t options[HS_OPT_COUNT] = {
#define X(id, dflt_, secure_, arg, doc)                                        \
	[HS_OPT_##id] = { .value = (dflt_), .dflt = (dflt_),                   \
			  .name = "HEAPSCOPE_" #id, .secure = (secure_) },
	HS_INT_OPTIONS(X)
#undef X
};

/* String options: the value is kept as found in environ (no copy). */
static str_option_desc_t str_options[HS_SOPT_COUNT] = {
#define X(id, secure_, arg, doc)                                               \
	[HS_SOPT_##id] = { .name = "HEAPSCOPE_" #id, .secure = (secure_) },
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

/* The value of option `name` in the environment entry e, or NULL. */
static const char *match(const char *e, const char *name)
{
	size_t len = strlen(name);

	return strncmp(e, name, len) == 0 && e[len] == '=' ? e + len + 1 : NULL;
}

void hs_options_scan(char *const *env, bool secure)
{
	for (int i = 0; i < HS_SOPT_COUNT; i++)
		str_options[i].value = NULL;
	for (int i = 0; i < HS_OPT_COUNT && secure; i++)
		if (!options[i].secure)
			__atomic_store_n(&options[i].value, options[i].dflt,
					 __ATOMIC_RELAXED);
	for (; env && *env; env++) {
		const char *e = *env, *v;

		if (strncmp(e, "HEAPSCOPE_", 10) != 0)
			continue;
		for (int i = 0; i < HS_SOPT_COUNT; i++) {
			str_option_desc_t *o = &str_options[i];

			if ((!secure || o->secure) && (v = match(e, o->name)))
				o->value = v;
		}
		for (int i = 0; i < HS_OPT_COUNT; i++) {
			option_desc_t *o = &options[i];
			int64_t n;

			if ((secure && !o->secure) || !(v = match(e, o->name)))
				continue;
			if (parse_int(v, &n)) {
				__atomic_store_n(&o->value, n,
						 __ATOMIC_RELAXED);
			} else if (!o->warned) {
				o->warned = true;
				hs_log("heapscope: bad value %s for %s, keeping "
				       "default %ld",
				       v, o->name, (long)o->dflt);
			}
		}
	}
}

/* AT_SECURE is in the auxiliary vector, which ld.so has read before any
 * of our code runs: getauxval neither allocates nor needs environ. */
void hs_options_init(void)
{
	hs_options_scan(environ, getauxval(AT_SECURE) != 0);
}

int64_t hs_option_get(hs_option_t opt)
{
	if ((unsigned)opt >= HS_OPT_COUNT)
		return 0;
	return __atomic_load_n(&options[opt].value, __ATOMIC_RELAXED);
}

const char *hs_option_string(hs_str_option_t opt)
{
	if ((unsigned)opt >= HS_SOPT_COUNT)
		return NULL;
	return str_options[opt].value;
}
