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
 *
 * The page heap's chunks (hs_lazy_init_heap) are the exception: mapped
 * writable with MAP_NORESERVE at once while the policy is heuristic (0)
 * or always (1) and no data limit is set, so that their 2 MiB commit
 * steps are bookkeeping (mimalloc maps all its memory so under those
 * policies).  A step could not be refused there anyway (the heuristic
 * refuses one mapping larger than RAM + swap), and mprotect takes the
 * address space's lock for writing while the page heap's lock is held:
 * a thread inside MADV_POPULATE_WRITE (that lock held for reading)
 * stalled the grow, and every thread that wanted the page heap behind
 * it.  The big tables keep their steps under every policy: 2.5 GiB
 * mapped writable would count against a data limit set after start.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
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

/* Whether a writable MAP_NORESERVE mapping is charged to nothing, decided
 * once: PREMAP_YES when vm.overcommit_memory is 0 or 1 (the kernel then
 * marks it VM_NORESERVE and does not account it, mm/mmap.c
 * accountable_mapping) and RLIMIT_DATA is unlimited (a writable private
 * mapping counts against it whole, touched or not); PREMAP_NO when the
 * policy is 2, cannot be read (no /proc in a chroot; strict is the safe
 * guess), or a data limit is set.  Read at the process's first
 * reservation, among its first allocations (before a sandbox would refuse
 * the open).  A later switch to strict, or a new data limit, makes the
 * writable mapping of a new reservation count in full; if that fails, the
 * reservation falls back to PROT_NONE (hs_lazy_init_heap). */
enum { PREMAP_UNKNOWN, PREMAP_YES, PREMAP_NO };
static int premap;

static bool premap_uncharged(void)
{
	int pm = __atomic_load_n(&premap, __ATOMIC_RELAXED);
	if (pm == PREMAP_UNKNOWN) {
		int saved = errno;
		char c = 0;
		/* raw system calls: an open() a preloaded library wraps
		 * could malloc, and this runs under the page heap's lock */
		long fd = syscall(SYS_openat, AT_FDCWD,
				  "/proc/sys/vm/overcommit_memory",
				  O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (syscall(SYS_read, fd, &c, 1) != 1)
				c = 0;
			syscall(SYS_close, fd);
		}
		struct rlimit data;
		bool unlimited = getrlimit(RLIMIT_DATA, &data) == 0 &&
				 data.rlim_cur == RLIM_INFINITY;
		errno = saved;
		pm = (c == '0' || c == '1') && unlimited ? PREMAP_YES
							 : PREMAP_NO;
		__atomic_store_n(&premap, pm, __ATOMIC_RELAXED);
	}
	return pm == PREMAP_YES;
}

int hs_lazy_init(hs_lazy_t *l, size_t size, size_t align)
{
	size = (size + HS_OS_PAGE - 1) & ~(HS_OS_PAGE - 1);
	l->writable = false;
	l->base = hs_os_reserve(size, align);
	if (!l->base)
		return -ENOMEM;
	l->size = size;
	l->committed = 0;
	return 0;
}

int hs_lazy_init_heap(hs_lazy_t *l, size_t size, size_t align)
{
	size = (size + HS_OS_PAGE - 1) & ~(HS_OS_PAGE - 1);
	if (!premap_uncharged())
		return hs_lazy_init(l, size, align);
	l->base =
		map_aligned(size, align, PROT_READ | PROT_WRITE, MAP_NORESERVE);
	if (!l->base)
		return hs_lazy_init(l, size, align);
	l->writable = true;
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
	if (!l->writable && mprotect(l->base + l->committed, end - l->committed,
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
