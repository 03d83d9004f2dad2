/* SPDX-License-Identifier: MIT */
/*
 * tests/programs/shim_mmap.c - a preload shim of the common kind: wraps
 * mmap and open, resolves the real functions lazily with
 * dlsym(RTLD_NEXT) on first use (dlsym itself may call malloc, which
 * calls mmap: the shim answers those nested calls with raw syscalls),
 * and allocates in its constructor both through malloc and through a
 * private mmap-based bump allocator, one of whose blocks it later hands
 * to free() - a pointer the malloc in charge never made.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*open_fn)(const char *, int, ...);

static mmap_fn real_mmap;
static open_fn real_open;
static __thread int resolving;
static unsigned long mmap_calls, open_calls;

static void resolve(void)
{
	if (resolving)
		return;
	resolving = 1;
	if (!real_mmap)
		real_mmap = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
	if (!real_open)
		real_open = (open_fn)dlsym(RTLD_NEXT, "open");
	resolving = 0;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	__atomic_add_fetch(&mmap_calls, 1, __ATOMIC_RELAXED);
	if (!real_mmap)
		resolve();
	if (!real_mmap) /* inside dlsym: nested call */
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd,
				       off);
	return real_mmap(addr, len, prot, flags, fd, off);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	__atomic_add_fetch(&open_calls, 1, __ATOMIC_RELAXED);
	if (!real_open)
		resolve();
	if (!real_open)
		return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
	return real_open(path, flags, mode);
}

/* the private allocator: a bump pointer in one mapping */
static char *arena, *arena_end;

static void *bump(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!arena || arena + n > arena_end)
		return NULL;
	void *p = arena;
	arena += n;
	return p;
}

static char *from_malloc, *from_bump;

__attribute__((constructor)) static void shim_init(void)
{
	arena = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	arena_end = arena == MAP_FAILED ? NULL : arena + (1 << 16);
	if (!arena_end)
		arena = NULL;
	from_malloc = malloc(100);
	if (from_malloc)
		strcpy(from_malloc, "shim");
	from_bump = bump(64);
	if (getenv("SHIM_REPORT"))
		(void)!write(2, "shim: loaded\n", 13);
}

__attribute__((destructor)) static void shim_fini(void)
{
	free(from_malloc);
	/* a block the malloc in charge did not make: glibc would abort,
	 * a replacement malloc must not crash or corrupt its heap */
	if (getenv("SHIM_FREE_FOREIGN"))
		free(from_bump);
	if (getenv("SHIM_REPORT")) {
		char line[96];
		int n = 0;
		unsigned long v[2] = {mmap_calls, open_calls};
		const char *tag[2] = {"shim: mmap calls ", " open calls "};
		for (int k = 0; k < 2; k++) {
			n += (int)strlen(strcpy(line + n, tag[k]));
			char d[24];
			int i = 0;
			do
				d[i++] = (char)('0' + v[k] % 10);
			while ((v[k] /= 10));
			while (i)
				line[n++] = d[--i];
		}
		line[n++] = '\n';
		(void)!write(2, line, (size_t)n);
	}
}
