/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/os.c - the only file that talks to the kernel's memory
 * interfaces (mmap, munmap, madvise).  Everything above works in terms of
 * reservations (hs_os_reserve) and decommit (hs_os_decommit).  Also the
 * thread id (gettid(2)), cached per thread.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/hs_common.h"
#include "base/os.h"

#define OS_PAGE 4096UL

static HS_TLS uint32_t cached_tid;

void *hs_os_reserve(size_t size, size_t align)
{
	if (align < OS_PAGE)
		align = OS_PAGE;
	if (size == 0 || (size & (OS_PAGE - 1)) || (align & (align - 1)))
		return NULL;
	/* Over-reserve by (align - 4 KiB) and trim both ends so the result
	 * is aligned without a retry loop. */
	size_t total = size + align - OS_PAGE;
	if (total < size)
		return NULL;
	void *m = mmap(NULL, total, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	uintptr_t base = (uintptr_t)m;
	uintptr_t aligned = (base + align - 1) & ~(uintptr_t)(align - 1);
	size_t head = aligned - base;
	size_t tail = total - head - size;
	if (head)
		munmap(m, head);
	if (tail)
		munmap((void *)(aligned + size), tail);
	return (void *)aligned;
}

int hs_os_decommit(void *p, size_t size)
{
	if (madvise(p, size, MADV_DONTNEED) != 0)
		return -errno;
	return 0;
}

int hs_os_nohugepage(void *p, size_t size)
{
	if (madvise(p, size, MADV_NOHUGEPAGE) != 0)
		return -errno;
	return 0;
}

int hs_os_hugepage(void *p, size_t size)
{
	if (madvise(p, size, MADV_HUGEPAGE) != 0)
		return -errno;
	return 0;
}

void hs_os_unmap(void *p, size_t size)
{
	if (p && size)
		munmap(p, size);
}

uint32_t hs_gettid(void)
{
	uint32_t t = cached_tid;
	if (HS_UNLIKELY(t == 0)) {
		t = (uint32_t)syscall(SYS_gettid);
		cached_tid = t;
	}
	return t;
}

void hs_os_fork_child(void)
{
	cached_tid = 0;
}
