/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/os.h - the kernel's memory interfaces (os.c is the only
 * file that calls mmap / mprotect / munmap / madvise) and the thread id.
 */
#ifndef HS_OS_H
#define HS_OS_H

#include <stddef.h>
#include <stdint.h>

/* The kernel's page, in bytes: the unit of mmap, madvise and mincore. */
#define HS_OS_PAGE 4096UL

/* Map size bytes (multiple of 4 KiB) readable and writable, aligned to
 * align (a power of two; below 4 KiB means 4 KiB), accounted as the
 * kernel's overcommit policy says: NULL (ENOMEM) when the kernel would
 * not back that much now (heuristic: more than RAM + swap; strict: more
 * than CommitLimit leaves).  Pages are committed when first touched.
 * Thread-safe. */
void *hs_os_alloc(size_t size, size_t align);
/* Reserve size bytes of address space (multiple of 4 KiB), PROT_NONE,
 * aligned as hs_os_alloc: charged to no policy, not to be touched until
 * made writable (hs_lazy_commit).  NULL on failure.  Thread-safe. */
void *hs_os_reserve(size_t size, size_t align);

/* Map size bytes (multiple of 4 KiB) of zeros, read-only: charged to no
 * policy (a read-only private mapping is not accounted), readable at
 * once; parts are made writable with hs_os_make_writable.  NULL on
 * failure.  Thread-safe. */
void *hs_os_map_readonly(size_t size);
/* Make [p, p + size) of a hs_os_map_readonly mapping (4 KiB aligned)
 * readable and writable, accounted then as new memory.  0, or -ENOMEM
 * when the overcommit policy refuses or the VMA limit is reached (then
 * nothing changed).  Thread-safe. */
int hs_os_make_writable(void *p, size_t size);

/* A reservation made writable front to back as it is used: bytes
 * [0, committed) of base are readable and writable (and accounted),
 * the rest PROT_NONE.  committed only grows; it is read with acquire by
 * code that must not touch beyond it without the owner's lock. */
typedef struct hs_lazy {
	char *base;
	size_t size;
	size_t committed;
} hs_lazy_t;
/* Reserve size bytes (rounded up to 4 KiB) aligned to align.  0 or
 * -ENOMEM. */
int hs_lazy_init(hs_lazy_t *l, size_t size, size_t align);
/* Make [0, bytes) writable, extending by a multiple of step bytes (a
 * power of two >= 4 KiB, at most up to the end).  0, or -ENOMEM when
 * bytes exceeds the reservation or the overcommit policy refuses (then
 * nothing changed).  Caller serialises calls on one l. */
int hs_lazy_commit(hs_lazy_t *l, size_t bytes, size_t step);
/* Give the pages back to the OS (MADV_DONTNEED); contents read as zero
 * afterwards.  Returns 0 or -errno. */
int hs_os_decommit(void *p, size_t size);
/* Take [p, p + size) (4 KiB aligned) of a private file mapping whose
 * pages this process never wrote out of its page tables (its RSS):
 * MADV_DONTNEED, whose next read maps the file's page again from the
 * page cache, which keeps it.  On a page the process did write (a
 * copy-on-write copy) the write would be lost: callers pass only ranges
 * of read-only segments that nothing relocates (sampling/unwind_tables.c).
 * Keeps errno.  Returns 0 or -errno. */
int hs_os_drop_clean(const void *p, size_t size);
/* Which of the npages 4 KiB pages from p (4 KiB aligned) are resident:
 * vec[i] bit 0 (mincore(2)); a page swapped out reads as not resident.
 * Returns 0 or -errno. */
int hs_os_resident(const void *p, size_t npages, unsigned char *vec);
/* Fault in [p, p + size) (4 KiB aligned, writable) for writing, in one
 * call (MADV_POPULATE_WRITE, Linux 5.14): on this project's VMs a write
 * fault costs ~11 us, a page populated 2.4 us alone, 0.8-0.9 us in calls
 * of 8-16 pages (bench/fault_cost).  Only for pages the caller writes next
 * anyway: it never adds to RSS what the writes would not.  A kernel or a
 * seccomp filter that refuses the advice (EINVAL, EPERM, ENOSYS) turns it off
 * for the process; other errors (ENOMEM, EINTR) are left to the writes
 * that follow, which fault as they would have.  errno is kept.
 * Thread-safe. */
void hs_os_populate_write(void *p, size_t size);
/* madvise(MADV_NOHUGEPAGE) / (MADV_HUGEPAGE).  Returns 0 or -errno. */
int hs_os_nohugepage(void *p, size_t size);
int hs_os_hugepage(void *p, size_t size);
void hs_os_unmap(void *p, size_t size);
/* Map the first size bytes (> 0) of the file fd read-only and private
 * (an object's symbol table, read at dump time); NULL on failure.  Undo
 * with hs_os_unmap(p, size).  Thread-safe. */
void *hs_os_map_file(int fd, size_t size);

/* Current kernel thread id (gettid(2), cached per thread; a fork child
 * reads it afresh, hs_os_fork_child).  Thread-safe. */
uint32_t hs_gettid(void);
/* In the child after fork: forget the parent's cached thread id. */
void hs_os_fork_child(void);

#endif /* HS_OS_H */
