// SPDX-License-Identifier: MIT
/*
 * symbolize.c - return addresses to function names with elfutils libdwfl.
 *
 * The target's /proc/PID/maps text is copied at attach (and refreshed when
 * a sampled address lies outside it while the process lives), and every
 * mapped file is opened then, through /proc/PID/root or map_files, so
 * symbols resolve after the process has exited and across mount
 * namespaces.  Modules are reported to libdwfl from the saved text with
 * dwfl_linux_proc_maps_report(fmemopen(...)); names come from
 * dwfl_module_addrname (.symtab, else .dynsym) on (return address - 1).
 */
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "heapscope.h"

struct file_fd {
	char *path; /* as in maps (target's view) */
	int fd;	    /* opened at snapshot time */
};

struct range {
	uint64_t start, end;
};

struct cache_ent {
	uint64_t addr; /* 0 = empty */
	char *name;
};

struct hs_syms {
	pid_t pid;
	char *maps; /* saved /proc/PID/maps text */
	size_t maps_len;
	struct range *ranges; /* executable file mappings, sorted */
	size_t nranges;
	struct file_fd *files;
	size_t nfiles;
	Dwfl *dwfl;
	struct cache_ent *cache;
	size_t ccap, cused;
	unsigned refreshes; /* maps snapshots taken after the first */
	uint64_t last_ns;   /* CLOCK_MONOTONIC of the last snapshot */
	bool stale;	    /* an unknown address waits for a snapshot */
};

/* Unknown addresses (JIT code, garbage) must not turn every event into a
 * /proc/PID/maps read: at most one refresh per interval. */
#define REFRESH_INTERVAL_NS 200000000ull

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

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
	.find_debuginfo = dwfl_standard_find_debuginfo,
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
	if (strstr(path, " (deleted)"))
		snprintf(open_path, sizeof(open_path), "/proc/%d/map_files/%s",
			 s->pid, range);
	else
		snprintf(open_path, sizeof(open_path), "/proc/%d/root%s",
			 s->pid, path);
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
	s->last_ns = mono_ns();
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
	for (size_t i = 0; i < s->ccap; i++)
		free(s->cache[i].name);
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
	if (kill(s->pid, 0) && errno == ESRCH)
		return;
	/* Files already opened stay: dlclose'd code keeps resolving. */
	snapshot(s);
	s->refreshes++;
	s->last_ns = mono_ns();
	s->stale = false;
}

void hs_syms__check(struct hs_syms *s, const uint64_t *addrs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!addrs[i] || known(s, addrs[i] - 1))
			continue;
		/* A library may have been loaded after the snapshot. */
		if (mono_ns() - s->last_ns >= REFRESH_INTERVAL_NS)
			refresh(s);
		else
			s->stale = true;
		return;
	}
}

void hs_syms__tick(struct hs_syms *s)
{
	if (s && s->stale && mono_ns() - s->last_ns >= REFRESH_INTERVAL_NS)
		refresh(s);
}

void hs_syms__sync(struct hs_syms *s)
{
	if (s && s->stale)
		refresh(s);
}

/*
 * Symbols shared by every process (the daemon follows many processes that
 * map the same libc, the same binary): keyed by the object's build id and
 * the offset of the address in it, so a second process does not read the
 * same symbol tables and DWARF again.  Bounded; thread-safe (the daemon
 * symbolizes different processes from different threads).  Entries live
 * until exit.
 */
#define GCACHE_MAX (1u << 20)

struct gent {
	uint64_t bid;	 /* hash of the build id, 0 = empty */
	uint64_t off;	 /* pc - module start */
	char *name;	 /* function, as resolve() */
	const char *file; /* interned source file or NULL */
	int line;
};

static struct {
	pthread_mutex_t lock;
	struct gent *e;
	size_t cap, used;
	uint64_t hits, misses;
} gcache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t gkey_hash(uint64_t bid, uint64_t off)
{
	uint64_t x = bid ^ (off * 0x9e3779b97f4a7c15ULL);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 29);
}

/* Hash of mod's build id (0 without one) and its start address. */
static uint64_t module_bid(Dwfl_Module *mod, Dwarf_Addr *start)
{
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	uint64_t h = 1469598103934665603ULL;
	int n;

	*start = 0;
	if (!dwfl_module_info(mod, NULL, start, NULL, NULL, NULL, NULL, NULL))
		return 0;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0 || !bits)
		return 0;
	for (int i = 0; i < n; i++)
		h = (h ^ bits[i]) * 1099511628211ULL;
	return h ? h : 1;
}

/* Copy of the cached entry for (bid, off) into *out (strings shared, they
 * never move); false on a miss. */
static bool gcache_get(uint64_t bid, uint64_t off, struct gent *out)
{
	bool hit = false;

	if (!bid)
		return false;
	pthread_mutex_lock(&gcache.lock);
	if (gcache.cap) {
		size_t mask = gcache.cap - 1;

		for (size_t i = gkey_hash(bid, off) & mask; gcache.e[i].bid;
		     i = (i + 1) & mask) {
			if (gcache.e[i].bid == bid && gcache.e[i].off == off) {
				*out = gcache.e[i];
				hit = true;
				break;
			}
		}
	}
	if (hit)
		gcache.hits++;
	else
		gcache.misses++;
	pthread_mutex_unlock(&gcache.lock);
	return hit;
}

static const char *intern_file(const char *file);

static void gcache_put(uint64_t bid, uint64_t off, const char *name,
		       const char *file, int line)
{
	size_t mask, i;
	char *dup;

	if (!bid || !name)
		return;
	pthread_mutex_lock(&gcache.lock);
	if (gcache.used >= GCACHE_MAX)
		goto out;
	if ((gcache.used + 1) * 4 > gcache.cap * 3) {
		size_t ncap = gcache.cap ? gcache.cap * 2 : 4096;
		struct gent *ne = calloc(ncap, sizeof(*ne));

		if (!ne)
			goto out;
		for (size_t j = 0; j < gcache.cap; j++) {
			if (!gcache.e[j].bid)
				continue;
			for (i = gkey_hash(gcache.e[j].bid, gcache.e[j].off) &
				 (ncap - 1);
			     ne[i].bid; i = (i + 1) & (ncap - 1))
				;
			ne[i] = gcache.e[j];
		}
		free(gcache.e);
		gcache.e = ne;
		gcache.cap = ncap;
	}
	mask = gcache.cap - 1;
	for (i = gkey_hash(bid, off) & mask; gcache.e[i].bid; i = (i + 1) & mask)
		if (gcache.e[i].bid == bid && gcache.e[i].off == off)
			goto out; /* another thread was first */
	dup = strdup(name);
	if (!dup)
		goto out;
	gcache.e[i] = (struct gent){bid, off, dup, intern_file(file), line};
	gcache.used++;
out:
	pthread_mutex_unlock(&gcache.lock);
}

/* Source file names, interned (few distinct); called with gcache.lock. */
static const char *intern_file(const char *file)
{
	static char **files;
	static size_t n, cap;

	if (!file)
		return NULL;
	for (size_t i = n; i-- > 0;)
		if (!strcmp(files[i], file))
			return files[i];
	if (n == cap) {
		size_t ncap = cap ? cap * 2 : 64;
		char **nf = realloc(files, ncap * sizeof(*nf));

		if (!nf)
			return NULL;
		files = nf;
		cap = ncap;
	}
	files[n] = strdup(file);
	return files[n] ? files[n++] : NULL;
}

void hs_syms__cache_stats(uint64_t *hits, uint64_t *misses, size_t *entries)
{
	pthread_mutex_lock(&gcache.lock);
	*hits = gcache.hits;
	*misses = gcache.misses;
	*entries = gcache.used;
	pthread_mutex_unlock(&gcache.lock);
}

static char *resolve_dwfl(struct hs_syms *s, uint64_t addr);

/* The function name of addr, through the shared cache when the object has
 * a build id (the line is looked up and cached with it). */
static char *resolve(struct hs_syms *s, uint64_t addr)
{
	Dwarf_Addr pc = addr - 1, start;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	struct gent g;
	uint64_t bid;
	char *name;

	if (!mod)
		return strdup("[unknown]");
	bid = module_bid(mod, &start);
	if (gcache_get(bid, pc - start, &g))
		return strdup(g.name);
	name = resolve_dwfl(s, addr);
	if (name && bid) {
		Dwfl_Line *line = dwfl_module_getsrc(mod, pc);
		const char *file = NULL;
		int lineno = 0;

		if (line)
			file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL,
					     NULL);
		if (!file || lineno <= 0) {
			file = NULL;
			lineno = 0;
		}
		gcache_put(bid, pc - start, name, file, lineno);
	}
	return name;
}

static char *resolve_dwfl(struct hs_syms *s, uint64_t addr)
{
	Dwarf_Addr pc = addr - 1, start = 0;
	const char *name, *mname, *slash;
	Dwfl_Module *mod;
	char *out = NULL;

	mod = dwfl_addrmodule(s->dwfl, pc);
	if (!mod)
		return strdup("[unknown]");
	name = dwfl_module_addrname(mod, pc);
	if (name && *name)
		return strndup(name, strcspn(name, "@")); /* drop @@GLIBC_x */
	mname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL,
				 NULL);
	if (!mname)
		return strdup("[unknown]");
	slash = strrchr(mname, '/');
	if (asprintf(&out, "%s+0x%llx", slash ? slash + 1 : mname,
		     (unsigned long long)(pc - start)) < 0)
		return NULL;
	return out;
}

static size_t hash_addr(uint64_t a)
{
	a ^= a >> 31;
	a *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(a ^ (a >> 29));
}

const char *hs_syms__name(void *ctx, uint64_t addr)
{
	struct hs_syms *s = ctx;
	size_t mask, i;

	if (!addr)
		return "[unknown]";
	if ((s->cused + 1) * 4 > s->ccap * 3) {
		size_t ncap = s->ccap * 2;
		struct cache_ent *nc = calloc(ncap, sizeof(*nc));

		if (!nc)
			return "[unknown]";
		for (size_t j = 0; j < s->ccap; j++) {
			if (!s->cache[j].addr)
				continue;
			for (i = hash_addr(s->cache[j].addr) & (ncap - 1);
			     nc[i].addr; i = (i + 1) & (ncap - 1))
				;
			nc[i] = s->cache[j];
		}
		free(s->cache);
		s->cache = nc;
		s->ccap = ncap;
	}
	mask = s->ccap - 1;
	for (i = hash_addr(addr) & mask; s->cache[i].addr; i = (i + 1) & mask)
		if (s->cache[i].addr == addr)
			return s->cache[i].name;
	s->cache[i].name = resolve(s, addr);
	if (!s->cache[i].name)
		return "[unknown]";
	s->cache[i].addr = addr;
	s->cused++;
	return s->cache[i].name;
}

unsigned hs_syms__refreshes(const struct hs_syms *s)
{
	return s ? s->refreshes : 0;
}

/* Module of `pc` with its path, range and hex build id. */
static void frame_module(Dwfl_Module *mod, struct hs_frame *f)
{
	const unsigned char *bits = NULL;
	Dwarf_Addr start = 0, end = 0;
	GElf_Addr vaddr;
	const char *name;
	int n;

	name = dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL,
				NULL);
	f->module = name;
	f->mod_start = start;
	f->mod_end = end;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 0 && bits) {
		if (n > HS_BUILD_ID_MAX)
			n = HS_BUILD_ID_MAX;
		for (int i = 0; i < n; i++)
			snprintf(f->build_id + 2 * i, 3, "%02x", bits[i]);
	}
}

int hs_syms__frame(struct hs_syms *s, uint64_t addr, struct hs_frame *f)
{
	Dwarf_Addr pc = addr - 1;
	Dwfl_Module *mod;
	Dwfl_Line *line;
	const char *name;

	memset(f, 0, sizeof(*f));
	if (!s || !addr)
		return -ENOENT;
	name = hs_syms__name(s, addr);
	f->function = name;
	mod = dwfl_addrmodule(s->dwfl, pc);
	if (!mod)
		return -ENOENT;
	frame_module(mod, f);
	{
		Dwarf_Addr start;
		uint64_t bid = module_bid(mod, &start);
		struct gent g;

		/* hs_syms__name just filled the shared cache for it. */
		if (gcache_get(bid, pc - start, &g)) {
			f->file = g.file;
			f->line = g.line;
			return 0;
		}
	}
	line = dwfl_module_getsrc(mod, pc);
	if (line) {
		int lineno = 0;
		const char *file =
			dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (file && lineno > 0) {
			f->file = file;
			f->line = lineno;
		}
	}
	return 0;
}
