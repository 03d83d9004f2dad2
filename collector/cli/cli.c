// SPDX-License-Identifier: MIT
/*
 * cli.c - what every subcommand's command line shares (cli.h): getopt_long
 * driven by one option table, one-line errors that say what is wrong and
 * what is accepted, the --help hint, and the parsers of pids and ranged
 * integers, and the one --lib check.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "target.h"

#define MAX_OPTS 32
#define PID_MAX_LIMIT 4194304 /* the kernel's bound of pid_max (64-bit) */

/* s for an error message: control and non-ASCII bytes as '?', cut at 64
 * bytes, so one bad argument cannot break the one-line rule. */
static const char *quote(const char *s, char *buf, size_t size)
{
	size_t i = 0;

	for (; s && *s && i + 4 < size && i < 64; s++)
		buf[i++] = isprint((unsigned char)*s) ? *s : '?';
	if (s && *s)
		buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
	buf[i] = '\0';
	return buf;
}

static void hint(const char *cmd)
{
	if (cmd)
		fprintf(stderr, "try 'heapscope %s --help'\n", cmd);
	else
		fputs("try 'heapscope --help'\n", stderr);
}

int hs_cli__usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* a message never spans lines, whatever it quotes */
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	fprintf(stderr, "heapscope%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "",
		msg);
	hint(cmd);
	return -EINVAL;
}

int hs_cli__bad_value(const char *cmd, const char *option, const char *value,
		      const char *accepts)
{
	char q[80];

	return hs_cli__usage_error(cmd, "invalid %s '%s' (%s)", option,
				   quote(value, q, sizeof(q)), accepts);
}

const char *hs_cli__accepts(const struct hs_cli_opt *opts, int key)
{
	for (; opts->name; opts++)
		if (opts->key == key)
			return opts->arg ? opts->arg : "";
	return "";
}

static const struct hs_cli_opt *by_key(const struct hs_cli_opt *opts, int key)
{
	for (; opts->name; opts++)
		if (opts->key == key)
			return opts;
	return NULL;
}

/* The option as the user wrote it: "--name" (up to '=') or "-X". */
static void option_text(const char *arg, int key, char *buf, size_t size)
{
	char q[80];

	if (arg && !strncmp(arg, "--", 2)) {
		snprintf(buf, size, "%.*s", (int)strcspn(arg, "="),
			 quote(arg, q, sizeof(q)));
	} else if (key > 0 && key < 256 && isprint(key)) {
		snprintf(buf, size, "-%c", key);
	} else {
		snprintf(buf, size, "%s", quote(arg, q, sizeof(q)));
	}
}

/* Unknown long option: name the candidates when it abbreviates several. */
static void unknown_option(const char *cmd, const char *text,
			   const struct hs_cli_opt *opts)
{
	size_t len = strlen(text + 2), n = 0;
	char list[256] = "";

	for (const struct hs_cli_opt *o = opts; len && o->name; o++) {
		if (strncmp(o->name, text + 2, len))
			continue;
		n++;
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s--%s", n > 1 ? ", " : "", o->name);
	}
	if (n > 1)
		hs_cli__usage_error(cmd, "ambiguous option '%s' (%s)", text,
				    list);
	else
		hs_cli__usage_error(cmd, "unknown option '%s'", text);
}

int hs_cli__next(const char *cmd, int argc, char **argv,
		 const struct hs_cli_opt *opts)
{
	struct option longopts[MAX_OPTS + 1];
	char shortopts[2 * MAX_OPTS + 2] = ":", text[96];
	size_t n = 0, s = 1;
	const struct hs_cli_opt *o;
	int c;

	for (o = opts; o->name && n < MAX_OPTS; o++, n++) {
		longopts[n] = (struct option){
			o->name, o->arg ? required_argument : no_argument, NULL,
			o->key};
		if (o->key < 256) {
			shortopts[s++] = (char)o->key;
			if (o->arg)
				shortopts[s++] = ':';
		}
	}
	longopts[n] = (struct option){NULL, 0, NULL, 0};
	shortopts[s] = '\0';
	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == ':') {
		o = by_key(opts, optopt);
		option_text(argv[optind - 1], optopt, text, sizeof(text));
		if (o && !strncmp(argv[optind - 1], "--", 2))
			snprintf(text, sizeof(text), "--%s", o->name);
		hs_cli__usage_error(cmd, "option '%s' needs a value (%s)", text,
				    o ? o->arg : "a value");
		return '?';
	}
	if (c != '?')
		return c;
	option_text(argv[optind - 1], optopt, text, sizeof(text));
	o = optopt ? by_key(opts, optopt) : NULL;
	if (o && !o->arg && !strncmp(argv[optind - 1], "--", 2))
		hs_cli__usage_error(cmd, "option '--%s' takes no value",
				    o->name);
	else if (!strncmp(text, "--", 2))
		unknown_option(cmd, text, opts);
	else
		hs_cli__usage_error(cmd, "unknown option '%s'", text);
	return '?';
}

int hs_cli__parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

long hs_cli__pid_max(void)
{
	static long max;
	FILE *f;

	if (max)
		return max;
	/* pids run from 1 to pid_max - 1 */
	max = PID_MAX_LIMIT - 1;
	f = fopen("/proc/sys/kernel/pid_max", "re");
	if (f) {
		long v;

		if (fscanf(f, "%ld", &v) == 1 && v > 1 && v <= PID_MAX_LIMIT)
			max = v - 1;
		fclose(f);
	}
	return max;
}

const char *hs_cli__pid_accepts(void)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "a process id, 1..%ld", hs_cli__pid_max());
	return buf;
}

int hs_cli__parse_lib(const char *cmd, const struct hs_cli_opt *opts, int key,
		      const char *s, const char **out)
{
	const unsigned probes =
		HS_NOTE_HEAPSCOPE | HS_NOTE_OTEL_ALLOC | HS_NOTE_DD_ALLOC;
	struct stat st;
	char q[80];

	if (!*s)
		return hs_cli__bad_value(cmd, "--lib", s,
					 hs_cli__accepts(opts, key));
	/* A path this process can read is checked now: an object without
	 * the probes (the program, libc) would match its mapping and fail
	 * later, far from the cause.  A path only the target's mount
	 * namespace has, or a file-name prefix, is checked when found; so
	 * is a non-regular file (/dev/null: attach to nothing). */
	if (strchr(s, '/') && !stat(s, &st) && S_ISREG(st.st_mode) &&
	    access(s, R_OK) == 0 && !(hs_elf_probe_notes(s) & probes))
		return hs_cli__usage_error(
			cmd,
			"--lib '%s' is not libheapscope (no heapscope "
			"probe notes in it; pass the libheapscope.so the "
			"process loads)",
			quote(s, q, sizeof(q)));
	*out = s;
	return 0;
}

int hs_cli__parse_symbolize(const char *cmd, const struct hs_cli_opt *opts,
			    int key, const char *s, bool *raw)
{
	if (strcmp(s, "local") && strcmp(s, "none"))
		return hs_cli__bad_value(cmd, "--symbolize", s,
					 hs_cli__accepts(opts, key));
	*raw = !strcmp(s, "none");
	return 0;
}

int hs_cli__parse_pid(const char *cmd, const char *option, const char *s,
		      pid_t *out)
{
	long v;

	if (hs_cli__parse_long(s, 1, hs_cli__pid_max(), &v))
		return hs_cli__bad_value(cmd, option, s, hs_cli__pid_accepts());
	*out = (pid_t)v;
	return 0;
}
