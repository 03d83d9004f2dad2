// SPDX-License-Identifier: MIT
/*
 * attach.c - attaching the BPF programs to a target's object: the USDT
 * programs of its provider, then the exit / exec tracepoints.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "heapscope.h"
#include "attach.h"

/* Compatible provider: free first (as for heapscope), if the object has
 * it; an object without a free probe gives allocations only. */
static int attach_compat(struct heapscope_bpf *skel, const struct hs_target *t)
{
	const char *prov = hs_provider_name(t->provider);
	struct bpf_link *link;

	if (hs_notes_have_free(t->notes, t->provider)) {
		link = bpf_program__attach_usdt(skel->progs.handle_compat_free,
						t->pid, t->open_path, prov,
						"free", NULL);
		if (!link)
			goto fail_free;
		skel->links.handle_compat_free = link;
	}
	link = bpf_program__attach_usdt(skel->progs.handle_compat_alloc, t->pid,
					t->open_path, prov, "alloc", NULL);
	if (!link) {
		int err = -errno;

		fprintf(stderr, "heapscope: cannot attach to %s:alloc in %s: %s\n",
			prov, t->path, strerror(-err));
		return err;
	}
	skel->links.handle_compat_alloc = link;
	return 0;
fail_free: {
	int err = -errno;

	fprintf(stderr, "heapscope: cannot attach to %s:free in %s: %s\n", prov,
		t->path, strerror(-err));
	return err;
}
}

static void attach_tracepoints(struct heapscope_bpf *skel)
{
	/* Exit/exec notices are a convenience: the loop also polls
	 * kill(pid, 0), so a kernel without them only reacts later. */
	skel->links.handle_exit = bpf_program__attach(skel->progs.handle_exit);
	skel->links.handle_exec = bpf_program__attach(skel->progs.handle_exec);
	if (!skel->links.handle_exit || !skel->links.handle_exec)
		fprintf(stderr,
			"heapscope: warning: no exit/exec tracepoints (%s); "
			"polling the process instead\n",
			strerror(errno));
}

int hs_attach__probes(struct heapscope_bpf *skel, const struct hs_target *t)
{
	static const struct {
		const char *probe;
		size_t prog_off, link_off;
	} probes[] = {
#define P(name)                                                                \
	{#name, offsetof(struct heapscope_bpf, progs.handle_##name),           \
	 offsetof(struct heapscope_bpf, links.handle_##name)}
		/* sample_free first: an alloc seen by an event then always
		 * has its free seen too, even if it happens mid-attach. */
		P(sample_free),
		P(sample_alloc),
		P(rate_change),
#undef P
	};
	char *base = (char *)skel;
	struct bpf_link *link;
	int err;

	if (t->provider == HS_PROVIDER_OTEL ||
	    t->provider == HS_PROVIDER_DDHEAP) {
		err = attach_compat(skel, t);
		if (err)
			return err;
		attach_tracepoints(skel);
		return 0;
	}
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		struct bpf_program *prog =
			*(struct bpf_program **)(base + probes[i].prog_off);

		link = bpf_program__attach_usdt(prog, t->pid, t->open_path,
						HEAPSCOPE_PROVIDER,
						probes[i].probe, NULL);
		if (!link) {
			err = -errno;
			fprintf(stderr,
				"heapscope: cannot attach to %s:%s in %s: %s\n",
				HEAPSCOPE_PROVIDER, probes[i].probe, t->path,
				strerror(-err));
			return err;
		}
		*(struct bpf_link **)(base + probes[i].link_off) = link;
	}
	attach_tracepoints(skel);
	return 0;
}
