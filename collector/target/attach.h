/* SPDX-License-Identifier: MIT */
/*
 * attach.h - attaching the skeleton's programs (attach.c; needs the
 * skeleton type, so only the command links it).  Main thread only.
 */
#ifndef HS_ATTACH_H
#define HS_ATTACH_H

#include "heapscope.skel.h"
#include "target.h"

/*
 * Attach the USDT programs of provider p (HEAPSCOPE, OTEL or DDHEAP; AUTO
 * is -EINVAL) to the object at path for process pid, or for every process
 * that maps it (pid -1): heapscope's sample_free, sample_alloc and
 * rate_change, or a compatible provider's free (if notes, HS_NOTE_*, has
 * it) and alloc, frees first.  0 with the links in links[0..*nlinks)
 * (at most HS_ATTACH_MAX_PROBES; the caller destroys them); or -errno
 * with the links of this call destroyed, *nlinks 0 and *failed the name
 * of the probe that could not be attached.  Prints nothing.
 */
int hs_attach__usdt(struct heapscope_bpf *skel, pid_t pid, const char *path,
		    enum hs_provider p, unsigned notes, struct bpf_link **links,
		    size_t *nlinks, const char **failed);

/* The exit / exec tracepoints (every process; the BPF side reports
 * tracked pids only), links in skel->links (destroyed with skel).  0, or
 * -errno when either could not be attached: exits are then seen by
 * polling the process (record) or by sweeps (daemon). */
int hs_attach__tracepoints(struct heapscope_bpf *skel);

/* The OOM killer's oom/mark_victim tracepoint (the daemon only; the BPF
 * side reports tracked pids only), link in skel->links.  0, or -errno
 * (-ENOENT: the kernel has no such tracepoint, the program was not
 * loaded: OOM kills are then seen as plain exits). */
int hs_attach__oom(struct heapscope_bpf *skel);

#endif /* HS_ATTACH_H */
