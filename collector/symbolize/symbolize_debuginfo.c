// SPDX-License-Identifier: MIT
/*
 * symbolize_debuginfo.c - where the debug info of a mapped object is
 * found when the object itself has none (a stripped binary): libdwfl's
 * find_debuginfo callback for the modules of a struct hs_syms.
 *
 * In order, the first that exists and carries the object's build id:
 *  1. the target's own /usr/lib/debug/.build-id/xx/yyyy.debug, read
 *     through /proc/PID/root (the daemon runs as root in the host's mount
 *     namespace; a container's debug files are in its own);
 *  2. the object's .gnu_debuglink name, through /proc/PID/root, next to
 *     the object, in its .debug/ directory and under /usr/lib/debug;
 *  3. libdwfl's dwfl_standard_find_debuginfo: the same places in our own
 *     mount namespace (build id, then debuglink with its CRC) and, when
 *     DEBUGINFOD_URLS is set, the debuginfod servers it names (libdwfl
 *     loads libdebuginfod.so.1; downloads go to DEBUGINFOD_CACHE_PATH or
 *     $XDG_CACHE_HOME/debuginfod_client).
 * hs_debuginfod_find asks the servers directly (`heapscope symbolize`,
 * which has a build id and no file), through libdebuginfod.so.1 loaded on
 * first use as libdwfl loads it, so the collector has no link-time
 * dependency on libdebuginfod and its HTTP stack.
 */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <pthread.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize_internal.h"
#include "target.h"

/* Does the ELF file open at fd carry build id bits (n bytes)? */
static bool has_build_id(int fd, const unsigned char *bits, int n)
{
	const void *got = NULL;
	bool ok = false;
	Elf *elf;

	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return false;
	ok = dwelf_elf_gnu_build_id(elf, &got) == n && !memcmp(got, bits, n);
	elf_end(elf);
	return ok;
}

int hs_open_regular(const char *path)
{
	/* O_NONBLOCK: a FIFO planted where a debug file is looked for must
	 * not block the daemon; then only a regular file is kept. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* fd of path if it has the build id (and *out its name), else -1. */
static int try_path(const char *path, const unsigned char *bits, int n,
		    char **out)
{
	int fd = hs_open_regular(path);

	if (fd < 0)
		return -1;
	if (!has_build_id(fd, bits, n) || !(*out = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Places 1 and 2 of the file comment, in the mount namespace of pid. */
static int find_in_target(pid_t pid, const char *modname, const char *debuglink,
			  const unsigned char *bits, int n, char **out)
{
	char tpath[PATH_MAX], path[PATH_MAX + 64], dir[PATH_MAX];
	const char *fmt[] = {"%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s"};
	size_t len;
	int fd;

	/* Paths as the target sees them, opened through its root
	 * (hs_target__open_path: /proc/PID/root/...). */
	len = (size_t)snprintf(tpath, sizeof(tpath),
			       "/usr/lib/debug/.build-id/%02x/", bits[0]);
	for (int i = 1; i < n; i++, len += 2)
		snprintf(tpath + len, 3, "%02x", bits[i]);
	strcpy(tpath + len, ".debug"); /* n <= HS_BUILD_ID_MAX: it fits */
	hs_target__open_path(pid, tpath, "", path, sizeof(path));
	fd = try_path(path, bits, n, out);
	if (fd >= 0)
		return fd;
	if (!debuglink || !*debuglink || strchr(debuglink, '/') ||
	    modname[0] != '/')
		return -1;
	/* The object's directory, as the target sees it. */
	snprintf(dir, sizeof(dir), "%s", modname);
	*strrchr(dir, '/') = '\0';
	for (size_t k = 0; k < sizeof(fmt) / sizeof(fmt[0]); k++) {
		if (snprintf(tpath, sizeof(tpath), fmt[k], dir, debuglink) >=
		    (int)sizeof(tpath))
			continue;
		hs_target__open_path(pid, tpath, "", path, sizeof(path));
		fd = try_path(path, bits, n, out);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

int hs_syms__find_debuginfo(Dwfl_Module *mod, void **userdata,
			    const char *modname, Dwarf_Addr base,
			    const char *file_name, const char *debuglink_file,
			    GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct hs_syms *s = *userdata;
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	int n, fd;

	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (s && s->pid > 0 && n > 0 && n <= HS_BUILD_ID_MAX && bits &&
	    modname) {
		fd = find_in_target(s->pid, modname, debuglink_file, bits, n,
				    debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base,
					    file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
}

static struct {
	pthread_once_t once;
	debuginfod_client *(*begin)(void);
	int (*find)(debuginfod_client *, const unsigned char *, int, char **);
	void (*end)(debuginfod_client *);
} dfd = {.once = PTHREAD_ONCE_INIT};

static void dfd_load(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (!h)
		return;
	dfd.begin =
		(debuginfod_client * (*)(void)) dlsym(h, "debuginfod_begin");
	dfd.find = (int (*)(debuginfod_client *, const unsigned char *, int,
			    char **))dlsym(h, "debuginfod_find_debuginfo");
	dfd.end = (void (*)(debuginfod_client *))dlsym(h, "debuginfod_end");
	if (!dfd.begin || !dfd.find || !dfd.end)
		dfd.begin = NULL;
}

int hs_debuginfod_find(const unsigned char *bits, int n, char **path)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *c;
	int fd;

	if (!urls || !*urls || n <= 0)
		return -ENOENT;
	pthread_once(&dfd.once, dfd_load);
	if (!dfd.begin)
		return -ELIBACC;
	c = dfd.begin();
	if (!c)
		return -ENOMEM;
	/* one client per call: a client is not thread-safe */
	fd = dfd.find(c, bits, n, path);
	dfd.end(c);
	return fd >= 0 ? fd : (fd == -ENOSYS ? -ENOENT : fd);
}
