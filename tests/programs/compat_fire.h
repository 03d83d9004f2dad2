/* SPDX-License-Identifier: MIT */
/* compat_fire.h - libcompat_fire.so (compat_fire.c). */
#ifndef COMPAT_FIRE_H
#define COMPAT_FIRE_H

#include <stdint.h>

/* otel_memory:alloc(p, size, weight) / otel_memory:free(p), if armed. */
void compat_fire_alloc(void *p, uint64_t size, uint64_t weight);
void compat_fire_free(void *p);
/* Both semaphores set (a collector attached both probes)? */
int compat_fire_armed(void);

#endif /* COMPAT_FIRE_H */
