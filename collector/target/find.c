// SPDX-License-Identifier: MIT
/*
 * find.c - finding the object that carries the probes in a target
 * process (hs_target__find*): by name in /proc/PID/maps, else by its
 * heapscope note; for other allocators the compatible otel_memory /
 * ddheap pair (abi.h).  Paths from /proc/PID/maps are the target's view;
 * they are opened through /proc/PID/root (or /proc/PID/map_files for
 * deleted files), so attaching works across mount namespaces.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target.h"

#define DELETED_SUFFIX " (deleted)"

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Length of a library file name without its ".so[.N[.N...]]" suffix:
 * "libheapscope.so.1.0.0" and "libheapscope.so" give 12; 0 when the name
 * does not end that way. */
static size_t so_stem_len(const char *name)
{
	const char *so = strstr(name, ".so");

	for (; so; so = strstr(so + 1, ".so")) {
		const char *p = so + 3;

		while (*p == '.' && p[1] >= '0' && p[1] <= '9') {
			p++;
			while (*p >= '0' && *p <= '9')
				p++;
		}
		if (!*p)
			return (size_t)(so - name);
	}
	return 0;
}

/* The same library, whatever the .so version suffix: a SONAME link
 * (libheapscope.so.1) and the real file (libheapscope.so.1.0.0), or a
 * container's copy installed as libheapscope.so. */
static bool same_library_name(const char *a, const char *b)
{
	size_t n = so_stem_len(a);

	return n && n == so_stem_len(b) && !strncmp(a, b, n);
}

static bool matches(const char *path, const char *match)
{
	char real[PATH_MAX];

	if (strchr(match, '/'))
		return !strcmp(path, match) ||
		       same_library_name(base_name(path), base_name(match)) ||
		       !strcmp(base_name(path), base_name(match)) ||
		       (realpath(match, real) && !strcmp(path, real));
	return !strncmp(base_name(path), match, strlen(match));
}

void hs_target__open_path(pid_t pid, const char *path, const char *range,
			  char *out, size_t size)
{
	size_t len = strlen(path), sl = strlen(DELETED_SUFFIX);

	if (len > sl && !strcmp(path + len - sl, DELETED_SUFFIX))
		snprintf(out, size, "/proc/%d/map_files/%s", pid, range);
	else
		snprintf(out, size, "/proc/%d/root%s", pid, path);
}

/*
 * Visit the files of /proc/PID/maps at file offset 0 (each path once per
 * run of mappings), in t->path and t->open_path, until want(t, ctx) says
 * yes: then t->map_start is its start and 0.  -ENOENT (t's paths empty)
 * when none is wanted, -ESRCH when there is no such process.
 */
static int scan_objects(struct hs_target *t,
			bool (*want)(struct hs_target *t, void *ctx), void *ctx)
{
	char maps[64], line[PATH_MAX + 256], path[PATH_MAX], seen[PATH_MAX];
	int err = -ENOENT;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", t->pid);
	f = fopen(maps, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	seen[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char range[64];
		int n = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &start, &end,
			   &off, &n) < 3 ||
		    !n || line[n] != '/')
			continue;
		snprintf(path, sizeof(path), "%s", line + n);
		path[strcspn(path, "\n")] = '\0';
		if (off != 0 || !strcmp(path, seen))
			continue;
		snprintf(seen, sizeof(seen), "%s", path);
		snprintf(t->path, sizeof(t->path), "%s", path);
		snprintf(range, sizeof(range), "%llx-%llx", start, end);
		hs_target__open_path(t->pid, t->path, range, t->open_path,
				     sizeof(t->open_path));
		if (want(t, ctx)) {
			t->map_start = start;
			err = 0;
			break;
		}
	}
	fclose(f);
	if (err)
		t->path[0] = t->open_path[0] = '\0';
	return err;
}

static bool by_name(struct hs_target *t, void *match)
{
	return matches(t->path, match);
}

static bool by_heapscope_note(struct hs_target *t, void *ctx)
{
	(void)ctx;
	return hs_elf_has_heapscope_note(t->open_path);
}

int hs_target__find(struct hs_target *t, pid_t pid, const char *match)
{
	int err;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	/* By name; failing that (and without an explicit --lib, which names
	 * the object: no guessing further), any mapped file with a
	 * heapscope note. */
	err = scan_objects(t, by_name,
			   (void *)(match ? match : HS_DEFAULT_LIB_PREFIX));
	if (err == -ENOENT && !match)
		err = scan_objects(t, by_heapscope_note, NULL);
	if (err)
		return err;
	if (access(t->open_path, R_OK))
		return -errno;
	t->provider = HS_PROVIDER_HEAPSCOPE;
	t->notes = hs_elf_probe_notes(t->open_path);
	return 0;
}

struct compat_want {
	const char *match; /* NULL: any object */
	enum hs_provider p;
};

static bool by_compat_probe(struct hs_target *t, void *ctx)
{
	const struct compat_want *w = ctx;

	if (w->match && !matches(t->path, w->match))
		return false;
	t->notes = hs_elf_probe_notes(t->open_path);
	return hs_notes_have_alloc(t->notes, w->p);
}

/* The first mapped object (matching `match` if not NULL) with provider
 * p's alloc probe. */
static int find_compat(struct hs_target *t, pid_t pid, const char *match,
		       enum hs_provider p)
{
	struct compat_want w = {.match = match, .p = p};
	int err;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	err = scan_objects(t, by_compat_probe, &w);
	if (err) {
		t->notes = 0;
		return err;
	}
	t->provider = p;
	if (access(t->open_path, R_OK))
		return -errno;
	return 0;
}

int hs_target__find_provider(struct hs_target *t, pid_t pid, const char *match,
			     enum hs_provider p)
{
	int err;

	switch (p) {
	case HS_PROVIDER_HEAPSCOPE:
		return hs_target__find(t, pid, match);
	case HS_PROVIDER_OTEL:
	case HS_PROVIDER_DDHEAP:
		return find_compat(t, pid, match, p);
	case HS_PROVIDER_AUTO:
	default:
		err = hs_target__find(t, pid, match);
		/* A --lib that is not libheapscope: its own probes decide. */
		if (!err && !(t->notes & HS_NOTE_HEAPSCOPE) &&
		    (t->notes & (HS_NOTE_OTEL_ALLOC | HS_NOTE_DD_ALLOC)))
			err = -ENOENT;
		if (err != -ENOENT)
			return err;
		err = find_compat(t, pid, match, HS_PROVIDER_OTEL);
		if (err != -ENOENT)
			return err;
		return find_compat(t, pid, match, HS_PROVIDER_DDHEAP);
	}
}
