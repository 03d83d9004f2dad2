/* SPDX-License-Identifier: MIT */
/* attach.h - attaching the skeleton's programs (needs the skeleton type). */
#ifndef HS_ATTACH_H
#define HS_ATTACH_H

#include "heapscope.skel.h"
#include "heapscope.h"

/* Attach the USDT programs of t->provider to target t (its pid only):
 * heapscope's sample_free, sample_alloc, rate_change, or a compatible
 * provider's free (if t has it) and alloc; then the exit/exec tracepoints.
 * Links are stored in skel->links (destroyed with skel).  0 or -errno
 * (after a message on stderr). */
int hs_attach__probes(struct heapscope_bpf *skel, const struct hs_target *t);

#endif /* HS_ATTACH_H */
