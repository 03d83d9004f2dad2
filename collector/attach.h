/* SPDX-License-Identifier: MIT */
/* attach.h - attaching the skeleton's programs (needs the skeleton type). */
#ifndef HS_ATTACH_H
#define HS_ATTACH_H

#include "heapscope.skel.h"
#include "heapscope.h"

/* Attach the USDT programs to target t (its pid only) and the exit/exec
 * tracepoints.  Links are stored in skel->links (destroyed with skel). */
int hs_attach__probes(struct heapscope_bpf *skel, const struct hs_target *t);

#endif /* HS_ATTACH_H */
