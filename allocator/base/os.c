/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/os.c - the only file that talks to the kernel's memory
 * interfaces (mmap, mprotect, munmap, madvise); also the thread id
 * (gettid(2), cached per thread).
 *
 * Two kinds of mapping, so that the kernel's overcommit policy
 * (vm.overcommit_memory) judges what the heap is about to use and only
 * that:
 *
 *  - hs_os_alloc: readable and writable at once, and accounted (no
 *    MAP_NORESERVE).  Under the default heuristic policy the kernel
 *    refuses a mapping larger than RAM + swap; under strict overcommit
 *    one above what is left of CommitLimit.  The page heap maps every
 *    block through it, so malloc(64 GiB) on a 24 GiB machine fails in
 *    the mmap, before any metadata exists.
 *  - hs_os_reserve + hs_lazy_commit: address space only (PROT_NONE,
 *    which no policy charges), made writable front to back as it is
 *    used; each step is judged by the policy as a new mapping would be.
 *    For the big tables sized for the worst case (the sampled region,
 *    its page index, the registry): reserved with MAP_NORESERVE and
 *    PROT_READ | PROT_WRITE they cost nothing under the heuristic
 *    policy, but strict overcommit ignores MAP_NORESERVE and charged
 *    6.6 GiB of CommitLimit to every process at start.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/hs_common.h"
#include "base/os.h"

/* Everything above maps whole heapscope pages. */
_Static_assert(HS_PAGE_SIZE % HS_OS_PAGE == 0, "heapscope pages are OS pages");

static HS_TLS uint32_t cached_tid;

/* mmap of size bytes aligned to align: over-map by (align - 4 KiB) and
 * trim both ends, so there is no retry loop. */
static void *map_aligned(size_t size, size_t align, int prot, int flags)
{
	if (align < HS_OS_PAGE)
		align = HS_OS_PAGE;
	if (size == 0 || (size & (HS_OS_PAGE - 1)) || (align & (align - 1)))
		return NULL;
	size_t total = size + align - HS_OS_PAGE;
	if (total < size)
		return NULL;
	void *m = mmap(NULL, total, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags,
		       -1, 0);
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

void *hs_os_alloc(size_t size, size_t align)
{
	return map_aligned(size, align, PROT_READ | PROT_WRITE, 0);
}

void *hs_os_reserve(size_t size, size_t align)
{
	/* no MAP_NORESERVE: with it the VMA is VM_NORESERVE and the
	 * mprotect in hs_lazy_commit would not be accounted (nor
	 * refused) under the heuristic policy */
	return map_aligned(size, align, PROT_NONE, 0);
}

void *hs_os_map_readonly(size_t size)
{
	return map_aligned(size, HS_OS_PAGE, PROT_READ, 0);
}

int hs_os_make_writable(void *p, size_t size)
{
	return mprotect(p, size, PROT_READ | PROT_WRITE) == 0 ? 0 : -ENOMEM;
}

int hs_lazy_init(hs_lazy_t *l, size_t size, size_t align)
{
	size = (size + HS_OS_PAGE - 1) & ~(HS_OS_PAGE - 1);
	l->base = hs_os_reserve(size, align);
	if (!l->base)
		return -ENOMEM;
	l->size = size;
	l->committed = 0;
	return 0;
}

int hs_lazy_commit(hs_lazy_t *l, size_t bytes, size_t step)
{
	if (bytes <= l->committed)
		return 0;
	if (!l->base || bytes > l->size)
		return -ENOMEM;
	/* round up to the next multiple of step (a power of two), so
	 * tables that grow an entry at a time make one call per step */
	size_t end = (bytes + step - 1) & ~(step - 1);
	if (end < bytes || end > l->size)
		end = l->size;
	if (mprotect(l->base + l->committed, end - l->committed,
		     PROT_READ | PROT_WRITE) != 0)
		return -errno;
	__atomic_store_n(&l->committed, end, __ATOMIC_RELEASE);
	return 0;
}

int hs_os_decommit(void *p, size_t size)
{
	if (madvise(p, size, MADV_DONTNEED) != 0)
		return -errno;
	return 0;
}

int hs_os_drop_clean(const void *p, size_t size)
{
	int saved = errno, r = 0;
	if (madvise((void *)p, size, MADV_DONTNEED) != 0)
		r = -errno;
	errno = saved;
	return r;
}

int hs_os_resident(const void *p, size_t npages, unsigned char *vec)
{
	if (mincore((void *)p, npages * 4096, vec) != 0)
		return -errno;
	return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

static int populate_off; /* the advice was refused once: not again */

void hs_os_populate_write(void *p, size_t size)
{
	if (__atomic_load_n(&populate_off, __ATOMIC_RELAXED))
		return;
	int saved = errno;
	if (madvise(p, size, MADV_POPULATE_WRITE) != 0 &&
	    (errno == EINVAL || errno == EPERM || errno == ENOSYS))
		__atomic_store_n(&populate_off, 1, __ATOMIC_RELAXED);
	errno = saved;
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

void *hs_os_map_file(int fd, size_t size)
{
	void *m;

	if (fd < 0 || size == 0)
		return NULL;
	m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	return m == MAP_FAILED ? NULL : m;
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
