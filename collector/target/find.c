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

static bool matches(const char *path, const char *match)
{
	char real[PATH_MAX];

	if (strchr(match, '/'))
		return !strcmp(path, match) ||
		       !strcmp(base_name(path), base_name(match)) ||
		       (realpath(match, real) && !strcmp(path, real));
	return !strncmp(base_name(path), match, strlen(match));
}

/* Fill open_path: the file as reachable from our mount namespace. */
static void set_open_path(struct hs_target *t, const char *range)
{
	size_t len = strlen(t->path), sl = strlen(DELETED_SUFFIX);

	if (len > sl && !strcmp(t->path + len - sl, DELETED_SUFFIX))
		snprintf(t->open_path, sizeof(t->open_path),
			 "/proc/%d/map_files/%s", t->pid, range);
	else
		snprintf(t->open_path, sizeof(t->open_path), "/proc/%d/root%s",
			 t->pid, t->path);
}

int hs_target__find(struct hs_target *t, pid_t pid, const char *match)
{
	char maps[64], line[PATH_MAX + 256], path[PATH_MAX], seen[PATH_MAX];
	int pass, err = -ENOENT;
	bool explicit_lib = match != NULL;
	FILE *f;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	if (!match)
		match = HS_DEFAULT_LIB_PREFIX;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	/* Pass 0: by name.  Pass 1: any mapped file with a heapscope note. */
	for (pass = 0; pass < 2 && err; pass++) {
		f = fopen(maps, "re");
		if (!f)
			return errno == ENOENT ? -ESRCH : -errno;
		seen[0] = '\0';
		while (fgets(line, sizeof(line), f)) {
			unsigned long long start, end, off;
			char range[64];
			int n = 0;

			path[0] = '\0';
			if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n",
				   &start, &end, &off, &n) < 3 ||
			    !n)
				continue;
			if (line[n] != '/')
				continue;
			snprintf(path, sizeof(path), "%s", line + n);
			path[strcspn(path, "\n")] = '\0';
			if (off != 0 || !strcmp(path, seen))
				continue;
			snprintf(seen, sizeof(seen), "%s", path);
			snprintf(t->path, sizeof(t->path), "%s", path);
			snprintf(range, sizeof(range), "%llx-%llx", start, end);
			set_open_path(t, range);
			if (pass == 0
				    ? matches(path, match)
				    : hs_elf_has_heapscope_note(t->open_path)) {
				t->map_start = start;
				err = 0;
				break;
			}
		}
		fclose(f);
		/* An explicit --lib names the object: do not guess further. */
		if (explicit_lib)
			break;
	}
	if (err) {
		t->path[0] = t->open_path[0] = '\0';
		return err;
	}
	if (access(t->open_path, R_OK))
		return -errno;
	t->provider = HS_PROVIDER_HEAPSCOPE;
	t->notes = hs_elf_probe_notes(t->open_path);
	return 0;
}

/* The first mapped object (matching `match` if not NULL) with provider
 * p's alloc probe. */
static int find_compat(struct hs_target *t, pid_t pid, const char *match,
		       enum hs_provider p)
{
	char maps[64], line[PATH_MAX + 256], path[PATH_MAX], seen[PATH_MAX];
	int err = -ENOENT;
	FILE *f;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
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
		if (match && !matches(path, match))
			continue;
		snprintf(t->path, sizeof(t->path), "%s", path);
		snprintf(range, sizeof(range), "%llx-%llx", start, end);
		set_open_path(t, range);
		t->notes = hs_elf_probe_notes(t->open_path);
		if (hs_notes_have_alloc(t->notes, p)) {
			t->map_start = start;
			t->provider = p;
			err = 0;
			break;
		}
	}
	fclose(f);
	if (err) {
		t->path[0] = t->open_path[0] = '\0';
		t->notes = 0;
		return err;
	}
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
