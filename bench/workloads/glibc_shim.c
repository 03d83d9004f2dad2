// SPDX-License-Identifier: MIT
/*
 * glibc_shim: a preload library that sends malloc and friends to glibc's
 * own implementation (__libc_*). Only for programs that link another
 * allocator themselves, such as Debian's redis-server (linked against
 * libjemalloc.so.2): preloading this makes the "glibc" column really glibc.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

void *malloc(size_t n)
{
	return __libc_malloc(n);
}

void free(void *p)
{
	__libc_free(p);
}

void *calloc(size_t n, size_t m)
{
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	return __libc_realloc(p, n);
}

void *memalign(size_t a, size_t n)
{
	return __libc_memalign(a, n);
}

void *aligned_alloc(size_t a, size_t n)
{
	return __libc_memalign(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
	void *p;

	if (a < sizeof(void *) || (a & (a - 1)))
		return EINVAL;
	p = __libc_memalign(a, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

/* glibc has no __libc_ name for this one: take libc's own symbol. */
size_t malloc_usable_size(void *p)
{
	static size_t (*libc_usable)(void *);

	if (!libc_usable) {
		void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

		libc_usable = (size_t(*)(void *))dlsym(h, "malloc_usable_size");
	}
	return libc_usable(p);
}
