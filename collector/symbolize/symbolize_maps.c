// SPDX-License-Identifier: MIT
/*
 * symbolize_maps.c - the per-process module map behind struct hs_syms.
 *
 * The target's /proc/PID/maps text is copied at attach (and refreshed when
 * a sampled address lies outside it while the process lives), and every
 * mapped file is opened then, through /proc/PID/root or map_files, so
 * symbols resolve after the process has exited and across mount
 * namespaces.  Modules are reported to libdwfl from the saved text with
 * dwfl_linux_proc_maps_report(fmemopen(...)).  Lookups are in symbolize.c.
 */
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "symbolize_internal.h"
#include "target.h"

/* Unknown addresses (JIT code, garbage) must not turn every event into a
 * /proc/PID/maps read: at most one refresh per interval. */
#define REFRESH_INTERVAL_NS 200000000ull

static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	/* Module userdata is set to the hs_syms after each report. */
	struct hs_syms *s = *userdata;

	(void)mod;
	if (s) {
		for (size_t i = 0; i < s->nfiles; i++) {
			if (strcmp(s->files[i].path, modname))
				continue;
			*file_name = strdup(modname);
			*elfp = NULL;
			return dup(s->files[i].fd);
		}
	}
	return dwfl_linux_proc_find_elf(mod, userdata, modname, base, file_name,
					elfp);
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = hs_syms__find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int read_text(const char *path, char **out, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0 || !buf) {
		int err = fd < 0 ? -errno : -ENOMEM;

		if (fd >= 0)
			close(fd);
		free(buf);
		return err;
	}
	while ((r = read(fd, buf + n, cap - n - 1)) > 0) {
		n += r;
		if (cap - n < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				close(fd);
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return -EIO;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int add_file(struct hs_syms *s, const char *path, const char *range)
{
	char open_path[PATH_MAX + 64];
	struct file_fd *nf;
	int fd;

	for (size_t i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i].path, path))
			return 0;
	hs_target__open_path(s->pid, path, range, open_path, sizeof(open_path));
	fd = open(open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* symbolized as module+offset later */
	nf = realloc(s->files, (s->nfiles + 1) * sizeof(*nf));
	if (!nf) {
		close(fd);
		return -ENOMEM;
	}
	s->files = nf;
	nf[s->nfiles].path = strdup(path);
	if (!nf[s->nfiles].path) {
		close(fd);
		return -ENOMEM;
	}
	nf[s->nfiles++].fd = fd;
	return 0;
}

/* Parse the saved maps: executable ranges, and open each file once. */
static int scan_maps(struct hs_syms *s)
{
	char *save = NULL, *text = strdup(s->maps);
	size_t cap = 0;
	int err = 0;

	if (!text)
		return -ENOMEM;
	s->nranges = 0;
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, end;
		char perms[8], range[64];
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &start, &end,
			   perms, &n) < 3)
			continue;
		if (perms[2] == 'x') {
			if (s->nranges == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct range *nr =
					realloc(s->ranges, ncap * sizeof(*nr));

				if (!nr) {
					err = -ENOMEM;
					break;
				}
				s->ranges = nr;
				cap = ncap;
			}
			s->ranges[s->nranges].start = start;
			s->ranges[s->nranges++].end = end;
		}
		if (n && line[n] == '/') {
			snprintf(range, sizeof(range), "%llx-%llx", start, end);
			err = add_file(s, line + n, range);
			if (err)
				break;
		}
	}
	free(text);
	if (s->nranges)
		qsort(s->ranges, s->nranges, sizeof(*s->ranges), cmp_range);
	return err;
}

static int set_userdata(Dwfl_Module *mod, void **userdata, const char *name,
			Dwarf_Addr start, void *arg)
{
	(void)mod;
	(void)name;
	(void)start;
	if (!*userdata)
		*userdata = arg;
	return DWARF_CB_OK;
}

static int report(struct hs_syms *s)
{
	FILE *f;
	int err;

	f = fmemopen(s->maps, s->maps_len, "r");
	if (!f)
		return -errno;
	dwfl_report_begin(s->dwfl);
	err = dwfl_linux_proc_maps_report(s->dwfl, f);
	fclose(f);
	if (dwfl_report_end(s->dwfl, NULL, NULL))
		return -EINVAL;
	dwfl_getmodules(s->dwfl, set_userdata, s, 0);
	return err > 0 ? -err : (err < 0 ? -EINVAL : 0);
}

static int snapshot(struct hs_syms *s)
{
	char path[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", s->pid);
	free(s->maps);
	s->maps = NULL;
	err = read_text(path, &s->maps, &s->maps_len);
	if (err)
		return err;
	err = scan_maps(s);
	if (err)
		return err;
	return report(s);
}

struct hs_syms *hs_syms__new(pid_t pid)
{
	struct hs_syms *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pid = pid;
	s->ccap = 1024;
	s->cache = calloc(s->ccap, sizeof(*s->cache));
	s->dwfl = dwfl_begin(&callbacks);
	if (!s->cache || !s->dwfl)
		goto err;
	if (snapshot(s)) {
		hs_syms__free(s);
		return NULL;
	}
	s->last_ns = hs_mono_ns();
	return s;
err:
	free(s->cache);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s);
	return NULL;
}

void hs_syms__free(struct hs_syms *s)
{
	if (!s)
		return;
	dwfl_end(s->dwfl);
	for (size_t i = 0; i < s->nfiles; i++) {
		close(s->files[i].fd);
		free(s->files[i].path);
	}
	for (size_t i = 0; i < s->ccap; i++) {
		if (s->cache[i].owned)
			chain_free(s->cache[i].c);
	}
	free(s->files);
	free(s->ranges);
	free(s->cache);
	free(s->maps);
	free(s);
}

static bool known(const struct hs_syms *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nranges;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < s->ranges[mid].start)
			hi = mid;
		else if (addr >= s->ranges[mid].end)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

static void refresh(struct hs_syms *s)
{
	if (!hs_proc__alive(s->pid))
		return;
	/* Files already opened stay: dlclose'd code keeps resolving. */
	snapshot(s);
	s->refreshes++;
	s->last_ns = hs_mono_ns();
	s->stale = false;
}

void hs_syms__check(struct hs_syms *s, const uint64_t *addrs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!addrs[i] || known(s, addrs[i] - 1))
			continue;
		/* A library may have been loaded after the snapshot. */
		if (hs_mono_ns() - s->last_ns >= REFRESH_INTERVAL_NS)
			refresh(s);
		else
			s->stale = true;
		return;
	}
}

void hs_syms__hint(void *syms, const uint64_t *stack, size_t n)
{
	if (syms)
		hs_syms__check(syms, stack, n);
}

void hs_syms__tick(struct hs_syms *s)
{
	if (s && s->stale && hs_mono_ns() - s->last_ns >= REFRESH_INTERVAL_NS)
		refresh(s);
}

void hs_syms__sync(struct hs_syms *s)
{
	if (s && s->stale)
		refresh(s);
}

unsigned hs_syms__refreshes(const struct hs_syms *s)
{
	return s ? s->refreshes : 0;
}
