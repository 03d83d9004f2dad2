// SPDX-License-Identifier: MIT
/*
 * allocator/api/profile_write.c - heapscope_profile_write(): a profile as
 * folded stacks or gzip'd pprof (common/pprof), symbolized in-process.
 *
 * Symbols come from dladdr(): the nearest exported (.dynsym) symbol, else
 * "module+0xOFFSET" with the module's file offset, which `addr2line -e
 * module` or pprof with the binaries at hand can resolve further.  Frames
 * are return addresses; they are looked up at address - 1 so a call that
 * ends a function is attributed to its caller, not to the next function.
 * This file runs only from the API (never inside malloc): it may call the
 * library's own malloc and takes no allocator lock.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "pprof.h"
#include "sampling/profile.h"

#define OUT_BUF 16384
#define NAME_MAX_LEN 512

struct out {
	int fd;
	int err;
	size_t len;
	char buf[OUT_BUF];
};

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void out_flush(struct out *o)
{
	if (!o->err && o->len)
		o->err = write_all(o->fd, o->buf, o->len);
	o->len = 0;
}

static void out_str(struct out *o, const char *s, size_t n)
{
	while (n) {
		size_t k = OUT_BUF - o->len < n ? OUT_BUF - o->len : n;

		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == OUT_BUF)
			out_flush(o);
	}
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : (path && *path ? path : "?");
}

/* Name of the frame at return address pc into name[NAME_MAX_LEN]; also
 * its module and load base through *fname / *fbase when not NULL. */
static void symbolize(uint64_t pc, char *name, const char **fname,
		      uint64_t *fbase)
{
	Dl_info info;
	uint64_t a = pc ? pc - 1 : 0;

	if (!dladdr((void *)(uintptr_t)a, &info)) {
		hs_snprintf(name, NAME_MAX_LEN, "0x%lx", (unsigned long)a);
		if (fname)
			*fname = NULL;
		if (fbase)
			*fbase = 0;
		return;
	}
	if (info.dli_sname && info.dli_saddr)
		hs_snprintf(name, NAME_MAX_LEN, "%s", info.dli_sname);
	else
		hs_snprintf(name, NAME_MAX_LEN, "%s+0x%lx",
			    base_name(info.dli_fname),
			    (unsigned long)(a - (uintptr_t)info.dli_fbase));
	if (fname)
		*fname = info.dli_fname;
	if (fbase)
		*fbase = (uintptr_t)info.dli_fbase;
}

static int64_t value_of(const struct heapscope_profile *p,
			const struct heapscope_sample *s)
{
	if (p->kind == HEAPSCOPE_PROFILE_LIFETIME)
		return (int64_t)s->lifetime_ns;
	return (int64_t)s->bytes_estimate;
}

static int write_folded(const struct heapscope_profile *p, int fd)
{
	struct out *o = malloc(sizeof(*o));
	char name[NAME_MAX_LEN], num[32];
	int r;

	if (!o)
		return -ENOMEM;
	o->fd = fd;
	o->err = 0;
	o->len = 0;
	for (size_t i = 0; i < p->count && !o->err; i++) {
		const struct heapscope_sample *s = &p->samples[i];
		int n;

		if (s->depth == 0)
			out_str(o, "[unknown]", 9);
		for (uint32_t f = s->depth; f-- > 0;) {
			symbolize(s->stack[f], name, NULL, NULL);
			/* ';' and ' ' separate frames and the value */
			for (char *c = name; *c; c++)
				if (*c == ';' || *c == ' ')
					*c = '_';
			out_str(o, name, strlen(name));
			if (f)
				out_str(o, ";", 1);
		}
		n = hs_snprintf(num, sizeof(num), " %ld\n", (long)value_of(p, s));
		out_str(o, num, (size_t)n);
	}
	out_flush(o);
	r = o->err;
	free(o);
	return r;
}

/* ---- pprof ---- */

struct module {
	uint64_t lo, hi, id;
	char path[256];
};

struct modules {
	struct module m[256];
	int n;
};

static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct modules *ms = arg;
	struct module *m;
	uint64_t lo = UINT64_MAX, hi = 0;

	(void)size;
	if (ms->n >= (int)(sizeof(ms->m) / sizeof(ms->m[0])))
		return 1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (hi <= lo)
		return 0;
	m = &ms->m[ms->n++];
	m->lo = lo;
	m->hi = hi;
	m->id = 0;
	hs_snprintf(m->path, sizeof(m->path), "%s",
		    info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name :
							    "[main]");
	return 0;
}

static uint64_t mapping_of(struct pprof_builder *b, struct modules *ms,
			   uint64_t pc)
{
	for (int i = 0; i < ms->n; i++) {
		struct module *m = &ms->m[i];

		if (pc < m->lo || pc >= m->hi)
			continue;
		if (!m->id)
			m->id = pprof_add_mapping(b, m->lo, m->hi, 0, m->path,
						  NULL, 1, 0);
		return m->id;
	}
	return 0;
}

static uint64_t location_of(struct pprof_builder *b, struct modules *ms,
			    uint64_t pc)
{
	uint64_t a = pc ? pc - 1 : 0, id = pprof_location_find(b, a);
	char name[NAME_MAX_LEN];
	const char *fname;
	struct pprof_line line = { 0, 0 };

	if (id)
		return id;
	symbolize(pc, name, &fname, NULL);
	line.function_id = pprof_function(b, name, fname);
	if (!line.function_id)
		return 0;
	return pprof_location(b, mapping_of(b, ms, a), a, &line, 1);
}

static int setup_types(struct pprof_builder *b,
		       const struct heapscope_profile *p)
{
	int r = 0;

	switch (p->kind) {
	case HEAPSCOPE_PROFILE_HEAP:
		r |= pprof_add_sample_type(b, "inuse_objects", "count");
		r |= pprof_add_sample_type(b, "inuse_space", "bytes");
		r |= pprof_set_default_sample_type(b, "inuse_space");
		break;
	case HEAPSCOPE_PROFILE_ALLOCS:
		r |= pprof_add_sample_type(b, "alloc_objects", "count");
		r |= pprof_add_sample_type(b, "alloc_space", "bytes");
		r |= pprof_set_default_sample_type(b, "alloc_space");
		break;
	default:
		r |= pprof_add_sample_type(b, "objects", "count");
		r |= pprof_add_sample_type(b, "lifetime", "nanoseconds");
		r |= pprof_set_default_sample_type(b, "lifetime");
		break;
	}
	r |= pprof_set_period(b, "space", "bytes", p->period);
	return r ? -ENOMEM : 0;
}

static int write_pprof(const struct heapscope_profile *p, int fd)
{
	struct pprof_builder *b = pprof_new();
	struct modules *ms = malloc(sizeof(*ms));
	uint64_t locs[HEAPSCOPE_MAX_FRAMES];
	char comment[160];
	uint8_t *data = NULL;
	size_t len = 0;
	int r = -ENOMEM;

	if (!b || !ms)
		goto out;
	ms->n = 0;
	dl_iterate_phdr(add_module, ms);
	r = setup_types(b, p);
	if (r)
		goto out;
	pprof_set_time(b, (int64_t)hs_clock_wall_ns(),
		       (int64_t)(p->end_ns - p->start_ns));
	hs_snprintf(comment, sizeof(comment),
		    "heapscope in-process profile: %zu samples, period %ld bytes, "
		    "%lu dropped", p->count, (long)p->period,
		    (unsigned long)p->dropped);
	pprof_add_comment(b, comment);
	for (size_t i = 0; i < p->count; i++) {
		const struct heapscope_sample *s = &p->samples[i];
		struct pprof_label labels[3];
		size_t nl = 0;
		int64_t v[2];
		uint32_t n = 0;

		for (uint32_t f = 0; f < s->depth; f++) {
			locs[n] = location_of(b, ms, s->stack[f]);
			if (!locs[n])
				goto out;
			n++;
		}
		v[0] = (int64_t)(s->count_estimate + 0.5);
		v[1] = value_of(p, s);
		if (p->kind == HEAPSCOPE_PROFILE_LIFETIME) {
			labels[nl++] = (struct pprof_label){
				"same_thread", s->same_thread ? "yes" : "no", 0,
				NULL
			};
		}
		labels[nl++] = (struct pprof_label){ "bytes", NULL,
						     (int64_t)s->allocated,
						     "bytes" };
		labels[nl++] = (struct pprof_label){ "requested", NULL,
						     (int64_t)s->requested,
						     "bytes" };
		r = pprof_add_sample(b, locs, n, v, 2, labels, nl);
		if (r)
			goto out;
	}
	r = pprof_encode(b, &data, &len);
	if (!r)
		r = write_all(fd, data, len);
out:
	free(data);
	free(ms);
	if (b)
		pprof_free(b);
	return r;
}

HS_EXPORT int heapscope_profile_write(const struct heapscope_profile *p,
				      int fd, int fmt)
{
	if (!p || fd < 0)
		return -EINVAL;
	if (fmt == HEAPSCOPE_FORMAT_FOLDED)
		return write_folded(p, fd);
	if (fmt == HEAPSCOPE_FORMAT_PPROF)
		return write_pprof(p, fd);
	return -EINVAL;
}
