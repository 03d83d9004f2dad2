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
 * The same snapshot gives pprof its mappings (hs_syms__mappings): one per
 * executable segment with its file offset, the file's GNU build id, the
 * executable flagged; a deleted file keeps its name without " (deleted)"
 * (stripped from the saved text too, so libdwfl's module names match) and
 * is read through /proc/PID/map_files.
 */
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "clock.h"
#include "symbolize_internal.h"
#include "target.h"

/* Unknown addresses (JIT code, garbage) must not turn every event into a
 * /proc/PID/maps read: at most one refresh per interval. */
#define REFRESH_INTERVAL_NS 200000000ull

#define DELETED_SUFFIX " (deleted)"

static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	/* Module userdata is set to the hs_syms after each report. */
	struct hs_syms *s = *userdata;

	(void)mod;
	if (s) {
		for (size_t i = 0; i < s->nfiles; i++) {
			if (s->files[i].fd < 0 ||
			    strcmp(s->files[i].path, modname))
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

/* Hex GNU build id of the ELF file fd into out ("" if none). */
static void read_build_id(int fd, char out[2 * HS_BUILD_ID_MAX + 1])
{
	const unsigned char *bits = NULL;
	ssize_t n;
	Elf *elf;

	out[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return;
	/* libdwelf bounds the note within the file it maps */
	n = dwelf_elf_gnu_build_id(elf, (const void **)&bits);
	if (n > 0 && bits) {
		if (n > HS_BUILD_ID_MAX)
			n = HS_BUILD_ID_MAX;
		for (ssize_t i = 0; i < n; i++)
			snprintf(out + 2 * i, 3, "%02x", bits[i]);
	}
	elf_end(elf);
}

/* path without a trailing " (deleted)": its length */
static size_t clean_len(const char *path)
{
	size_t len = strlen(path), sl = strlen(DELETED_SUFFIX);

	if (len > sl && !strcmp(path + len - sl, DELETED_SUFFIX))
		return len - sl;
	return len;
}

/* The file of a maps line (path as maps has it, range "start-end"), opened
 * once: its index in s->files, or -ENOMEM.  A file that cannot be opened
 * is kept with fd -1 (its name still names the mapping). */
static long add_file(struct hs_syms *s, const char *path, const char *range)
{
	char open_path[PATH_MAX + 64];
	size_t clen = clean_len(path);
	struct file_fd *nf;
	char *name;

	for (size_t i = 0; i < s->nfiles; i++)
		if (strlen(s->files[i].path) == clen &&
		    !strncmp(s->files[i].path, path, clen))
			return (long)i;
	/* the open helper reads a deleted file through map_files */
	hs_target__open_path(s->pid, path, range, open_path, sizeof(open_path));
	name = strndup(path, clen);
	nf = name ? realloc(s->files, (s->nfiles + 1) * sizeof(*nf)) : NULL;
	if (!nf) {
		free(name);
		return -ENOMEM;
	}
	s->files = nf;
	nf += s->nfiles;
	nf->path = name;
	nf->fd = open(open_path, O_RDONLY | O_CLOEXEC);
	nf->build_id[0] = '\0';
	if (nf->fd >= 0)
		read_build_id(nf->fd, nf->build_id);
	return (long)s->nfiles++;
}

/* The executable's device and inode, and its path (target's view, without
 * " (deleted)"), to flag its mappings; false when it cannot be read. */
struct exe_id {
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];
};

static bool read_exe(pid_t pid, struct exe_id *e)
{
	char link[64];
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	if (stat(link, &st))
		return false;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	n = readlink(link, e->path, sizeof(e->path) - 1);
	e->path[n > 0 ? n : 0] = '\0';
	e->path[clean_len(e->path)] = '\0';
	return true;
}

static int add_mapping(struct hs_syms *s, size_t *cap,
		       const struct hs_mapping *m)
{
	if (s->nmappings == *cap) {
		size_t ncap = *cap ? *cap * 2 : 32;
		struct hs_mapping *nm =
			realloc(s->mappings, ncap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		s->mappings = nm;
		*cap = ncap;
	}
	s->mappings[s->nmappings++] = *m;
	return 0;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct hs_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Remove " (deleted)" from the end of every line of the saved text, so
 * libdwfl names modules as the files were named. */
static void strip_deleted(struct hs_syms *s)
{
	size_t sl = strlen(DELETED_SUFFIX), o = 0;
	char *p = s->maps, *end = s->maps + s->maps_len;

	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		size_t keep = len;

		if (len > sl && !memcmp(p + len - sl, DELETED_SUFFIX, sl))
			keep = len - sl;
		memmove(s->maps + o, p, keep);
		o += keep;
		if (nl)
			s->maps[o++] = '\n';
		p += len + (nl ? 1 : 0);
	}
	s->maps[o] = '\0';
	s->maps_len = o;
}

/* Parse the saved maps: executable ranges and mappings, and open each
 * file once. */
static int scan_maps(struct hs_syms *s)
{
	char *save = NULL, *text = strdup(s->maps);
	size_t cap = 0, mcap = 0;
	struct exe_id exe;
	bool have_exe = read_exe(s->pid, &exe);
	int err = 0;

	if (!text)
		return -ENOMEM;
	s->nranges = 0;
	s->nmappings = 0;
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, end, off;
		unsigned long maj, min, ino;
		char perms[8], range[64];
		struct hs_mapping m;
		long fi = -1;
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %lx:%lx %lu %n", &start,
			   &end, perms, &off, &maj, &min, &ino, &n) < 7 ||
		    end <= start || strlen(perms) < 4)
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
		if (!n || line[n] != '/')
			continue;
		snprintf(range, sizeof(range), "%llx-%llx", start, end);
		fi = add_file(s, line + n, range);
		if (fi < 0) {
			err = (int)fi;
			break;
		}
		if (perms[2] != 'x')
			continue;
		m = (struct hs_mapping){.start = start,
					.limit = end,
					.offset = off,
					.path = s->files[fi].path};
		memcpy(m.build_id, s->files[fi].build_id, sizeof(m.build_id));
		/* by inode (the name may have been replaced), else by name */
		m.main = have_exe &&
			 ((ino == exe.ino && makedev(maj, min) == exe.dev) ||
			  !strcmp(m.path, exe.path));
		err = add_mapping(s, &mcap, &m);
		if (err)
			break;
	}
	free(text);
	if (s->nranges)
		qsort(s->ranges, s->nranges, sizeof(*s->ranges), cmp_range);
	if (s->nmappings)
		qsort(s->mappings, s->nmappings, sizeof(*s->mappings),
		      cmp_mapping);
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
	strip_deleted(s);
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
		if (s->files[i].fd >= 0)
			close(s->files[i].fd);
		free(s->files[i].path);
	}
	for (size_t i = 0; i < s->ccap; i++) {
		if (s->cache[i].owned)
			chain_free(s->cache[i].c);
	}
	free(s->files);
	free(s->mappings);
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

const struct hs_mapping *hs_syms__mappings(const struct hs_syms *s, size_t *n)
{
	*n = s ? s->nmappings : 0;
	return s ? s->mappings : NULL;
}

long hs_syms__mapping_at(const struct hs_syms *s, uint64_t pc)
{
	size_t lo = 0, hi = s ? s->nmappings : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pc < s->mappings[mid].start)
			hi = mid;
		else if (pc >= s->mappings[mid].limit)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}
