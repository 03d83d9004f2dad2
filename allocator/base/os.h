/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/os.h - the kernel's memory interfaces (os.c is the only
 * file that calls mmap / munmap / madvise) and the thread id.
 */
#ifndef HS_OS_H
#define HS_OS_H

#include <stddef.h>
#include <stdint.h>

/* Reserve and map size bytes (multiple of 4 KiB) readable and writable,
 * MAP_NORESERVE, aligned to align (power of two >= 4 KiB).  NULL on
 * failure.  Thread-safe. */
void *hs_os_reserve(size_t size, size_t align);
/* Give the pages back to the OS (MADV_DONTNEED); contents read as zero
 * afterwards.  Returns 0 or -errno. */
int hs_os_decommit(void *p, size_t size);
/* madvise(MADV_NOHUGEPAGE) / (MADV_HUGEPAGE).  Returns 0 or -errno. */
int hs_os_nohugepage(void *p, size_t size);
int hs_os_hugepage(void *p, size_t size);
void hs_os_unmap(void *p, size_t size);

/* Current kernel thread id (gettid(2), cached per thread; a fork child
 * reads it afresh, hs_os_fork_child).  Thread-safe. */
uint32_t hs_gettid(void);
/* In the child after fork: forget the parent's cached thread id. */
void hs_os_fork_child(void);

#endif /* HS_OS_H */
