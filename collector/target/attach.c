// SPDX-License-Identifier: MIT
/*
 * attach.c - attaching the BPF programs to a target's object, for `record`
 * (one pid) and the daemon (pid -1: every process that maps the object)
 * alike: the USDT programs of its provider, then the exit / exec
 * tracepoints.  uprobes live on the object's inode, so the path may be
 * any path to the file (/proc/PID/root/..., map_files).
 */
#include <errno.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "attach.h"

int hs_attach__usdt(struct heapscope_bpf *skel, pid_t pid, const char *path,
		    enum hs_provider p, unsigned notes, struct bpf_link **links,
		    size_t *nlinks, const char **failed)
{
	struct bpf_program *progs[HS_ATTACH_MAX_PROBES];
	const char *names[HS_ATTACH_MAX_PROBES];
	size_t nprogs = 0;

	*nlinks = 0;
	*failed = NULL;
	if (p == HS_PROVIDER_HEAPSCOPE) {
		/* sample_free first: an alloc seen by an event then always
		 * has its free seen too, even if it happens mid-attach. */
		progs[nprogs] = skel->progs.handle_sample_free;
		names[nprogs++] = "sample_free";
		progs[nprogs] = skel->progs.handle_sample_alloc;
		names[nprogs++] = "sample_alloc";
		progs[nprogs] = skel->progs.handle_rate_change;
		names[nprogs++] = "rate_change";
	} else if (p == HS_PROVIDER_OTEL || p == HS_PROVIDER_DDHEAP) {
		/* free first as well, if the object has it; an object
		 * without a free probe gives allocations only */
		if (hs_notes_have_free(notes, p)) {
			progs[nprogs] = skel->progs.handle_compat_free;
			names[nprogs++] = "free";
		}
		progs[nprogs] = skel->progs.handle_compat_alloc;
		names[nprogs++] = "alloc";
	} else {
		return -EINVAL;
	}
	for (size_t i = 0; i < nprogs; i++) {
		struct bpf_link *link = bpf_program__attach_usdt(
			progs[i], pid, path, hs_provider_name(p), names[i],
			NULL);

		if (!link) {
			int err = -errno;

			*failed = names[i];
			while (*nlinks)
				bpf_link__destroy(links[--*nlinks]);
			return err;
		}
		links[(*nlinks)++] = link;
	}
	return 0;
}

int hs_attach__tracepoints(struct heapscope_bpf *skel)
{
	skel->links.handle_exit = bpf_program__attach(skel->progs.handle_exit);
	skel->links.handle_exec = bpf_program__attach(skel->progs.handle_exec);
	if (!skel->links.handle_exit || !skel->links.handle_exec)
		return errno ? -errno : -ENOENT;
	return 0;
}

int hs_attach__oom(struct heapscope_bpf *skel)
{
	if (!bpf_program__autoload(skel->progs.handle_oom))
		return -ENOENT;
	skel->links.handle_oom = bpf_program__attach(skel->progs.handle_oom);
	if (!skel->links.handle_oom)
		return errno ? -errno : -ENOENT;
	return 0;
}
