// SPDX-License-Identifier: MIT
/*
 * attach.c - finding the object that carries the heapscope probes in a
 * target process, and attaching the BPF programs to it.  Paths from
 * /proc/PID/maps are the target's view; they are opened through
 * /proc/PID/root (or /proc/PID/map_files for deleted files), so attaching
 * works across mount namespaces.  The probes are heapscope's own or, for
 * other allocators, the compatible otel_memory / ddheap pair (abi.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "heapscope.h"
#include "attach.h"

#define DELETED_SUFFIX " (deleted)"

/* HS_NOTE_* bit of one probe (provider, name), 0 if not one of ours. */
static unsigned note_bit(const char *provider, const char *name)
{
	if (!strcmp(provider, HEAPSCOPE_PROVIDER))
		return !strcmp(name, "sample_alloc") ? HS_NOTE_HEAPSCOPE : 0;
	if (!strcmp(provider, HEAPSCOPE_COMPAT_OTEL))
		return !strcmp(name, "alloc") ? HS_NOTE_OTEL_ALLOC :
		       !strcmp(name, "free")  ? HS_NOTE_OTEL_FREE :
						0;
	if (!strcmp(provider, HEAPSCOPE_COMPAT_DDHEAP))
		return !strcmp(name, "alloc") ? HS_NOTE_DD_ALLOC :
		       !strcmp(name, "free")  ? HS_NOTE_DD_FREE :
						0;
	return 0;
}

unsigned hs_elf_probe_notes(const char *path)
{
	Elf_Scn *scn = NULL;
	unsigned found = 0;
	size_t shstrndx;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF ||
	    elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *data;
		const char *name;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.stapsdt"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off,
					   &desc_off)) > 0) {
			const char *desc = (const char *)data->d_buf + desc_off;
			size_t addr_bytes = 3 * 8; /* pc, base, semaphore */
			size_t rest, plen, nlen;
			const char *prov, *pname;

			/* gelf_getnote checked that name and desc lie in
			 * the section; the strings inside desc are ours to
			 * bound. */
			if (nh.n_type != 3 ||
			    nh.n_namesz != sizeof("stapsdt") ||
			    memcmp((const char *)data->d_buf + name_off,
				   "stapsdt", sizeof("stapsdt")) ||
			    nh.n_descsz <= addr_bytes)
				continue;
			prov = desc + addr_bytes;
			rest = nh.n_descsz - addr_bytes;
			plen = strnlen(prov, rest);
			if (plen >= rest)
				continue;
			pname = prov + plen + 1;
			rest -= plen + 1;
			nlen = strnlen(pname, rest);
			if (nlen >= rest)
				continue;
			found |= note_bit(prov, pname);
		}
	}
out:
	elf_end(elf);
	close(fd);
	return found;
}

bool hs_elf_has_heapscope_note(const char *path)
{
	return hs_elf_probe_notes(path) & HS_NOTE_HEAPSCOPE;
}

bool hs_notes_have_alloc(unsigned notes, enum hs_provider p)
{
	switch (p) {
	case HS_PROVIDER_HEAPSCOPE:
		return notes & HS_NOTE_HEAPSCOPE;
	case HS_PROVIDER_OTEL:
		return notes & HS_NOTE_OTEL_ALLOC;
	case HS_PROVIDER_DDHEAP:
		return notes & HS_NOTE_DD_ALLOC;
	default:
		return false;
	}
}

bool hs_notes_have_free(unsigned notes, enum hs_provider p)
{
	switch (p) {
	case HS_PROVIDER_HEAPSCOPE:
		return notes & HS_NOTE_HEAPSCOPE;
	case HS_PROVIDER_OTEL:
		return notes & HS_NOTE_OTEL_FREE;
	case HS_PROVIDER_DDHEAP:
		return notes & HS_NOTE_DD_FREE;
	default:
		return false;
	}
}

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

/* Compatible provider: free first (as for heapscope), if the object has
 * it; an object without a free probe gives allocations only. */
static int attach_compat(struct heapscope_bpf *skel, const struct hs_target *t)
{
	const char *prov = hs_provider_name(t->provider);
	struct bpf_link *link;

	if (hs_notes_have_free(t->notes, t->provider)) {
		link = bpf_program__attach_usdt(skel->progs.handle_compat_free,
						t->pid, t->open_path, prov,
						"free", NULL);
		if (!link)
			goto fail_free;
		skel->links.handle_compat_free = link;
	}
	link = bpf_program__attach_usdt(skel->progs.handle_compat_alloc, t->pid,
					t->open_path, prov, "alloc", NULL);
	if (!link) {
		int err = -errno;

		fprintf(stderr, "heapscope: cannot attach to %s:alloc in %s: %s\n",
			prov, t->path, strerror(-err));
		return err;
	}
	skel->links.handle_compat_alloc = link;
	return 0;
fail_free: {
	int err = -errno;

	fprintf(stderr, "heapscope: cannot attach to %s:free in %s: %s\n", prov,
		t->path, strerror(-err));
	return err;
}
}

static void attach_tracepoints(struct heapscope_bpf *skel)
{
	/* Exit/exec notices are a convenience: the loop also polls
	 * kill(pid, 0), so a kernel without them only reacts later. */
	skel->links.handle_exit = bpf_program__attach(skel->progs.handle_exit);
	skel->links.handle_exec = bpf_program__attach(skel->progs.handle_exec);
	if (!skel->links.handle_exit || !skel->links.handle_exec)
		fprintf(stderr,
			"heapscope: warning: no exit/exec tracepoints (%s); "
			"polling the process instead\n",
			strerror(errno));
}

int hs_attach__probes(struct heapscope_bpf *skel, const struct hs_target *t)
{
	static const struct {
		const char *probe;
		size_t prog_off, link_off;
	} probes[] = {
#define P(name)                                                                \
	{#name, offsetof(struct heapscope_bpf, progs.handle_##name),           \
	 offsetof(struct heapscope_bpf, links.handle_##name)}
		/* sample_free first: an alloc seen by an event then always
		 * has its free seen too, even if it happens mid-attach. */
		P(sample_free),
		P(sample_alloc),
		P(rate_change),
#undef P
	};
	char *base = (char *)skel;
	struct bpf_link *link;
	int err;

	if (t->provider == HS_PROVIDER_OTEL ||
	    t->provider == HS_PROVIDER_DDHEAP) {
		err = attach_compat(skel, t);
		if (err)
			return err;
		attach_tracepoints(skel);
		return 0;
	}
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		struct bpf_program *prog =
			*(struct bpf_program **)(base + probes[i].prog_off);

		link = bpf_program__attach_usdt(prog, t->pid, t->open_path,
						HEAPSCOPE_PROVIDER,
						probes[i].probe, NULL);
		if (!link) {
			err = -errno;
			fprintf(stderr,
				"heapscope: cannot attach to %s:%s in %s: %s\n",
				HEAPSCOPE_PROVIDER, probes[i].probe, t->path,
				strerror(-err));
			return err;
		}
		*(struct bpf_link **)(base + probes[i].link_off) = link;
	}
	attach_tracepoints(skel);
	return 0;
}
