// SPDX-License-Identifier: MIT
/*
 * allocator/api/profile_write.c - heapscope_profile_write(): a profile as
 * folded stacks (one line per distinct stack, values summed) or gzip'd
 * pprof (common/pprof), symbolized in-process.
 *
 * Names come from each loaded object's own symbol table (api/objects.c:
 * .symtab from the file on disk, so static and hidden functions are
 * named), else dladdr() (exported symbols), else "module+0xOFFSET" from
 * the load bias, which addr2line or `heapscope symbolize` resolve
 * further.  pprof mappings are the objects' executable segments as
 * /proc/self/maps shows them, with build ids, the program first (mapping
 * 1) under its real path.  Frames are return addresses; they are looked
 * up at address - 1 so a call that ends a function is attributed to its
 * caller.  This file runs only from the API (never inside malloc): it may
 * call the library's own malloc and takes no allocator lock.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/objects.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/os.h"
#include "pprof.h"
#include "sampling/profile.h"

#define OUT_BUF 16384
#define NAME_MAX_LEN 512
#define PAGE_UP(x) (((x) + 4095) & ~(size_t)4095)
/* mapping ids: one per executable segment of every object */
#define MAX_IDS (HS_OBJ_MAX * HS_OBJ_MAX_SEGS)

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

/* C++ names as people read them, when the process has libstdc++'s
 * demangler (a C program without it keeps the mangled names).  It
 * returns a malloc'd string: from this API, never inside malloc. */
typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static void demangle(char *name, char *sys)
{
	static demangle_fn fn;
	static int looked;
	char *d;
	int st = -1;

	sys[0] = '\0';
	if (name[0] != '_' || name[1] != 'Z')
		return;
	if (!looked) {
		fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		looked = 1;
	}
	d = fn ? fn(name, NULL, NULL, &st) : NULL;
	if (d && st == 0) {
		hs_snprintf(sys, NAME_MAX_LEN, "%s", name);
		hs_snprintf(name, NAME_MAX_LEN, "%s", d);
	}
	free(d);
}

/* Name of the frame at return address pc into name[NAME_MAX_LEN],
 * demangled, and the name as the object has it into sys ("": the
 * same). */
static void symbolize(struct hs_objects *objs, uint64_t pc, char *name,
		      char *sys)
{
	uint64_t a = pc ? pc - 1 : 0;
	struct hs_object *o = hs_objects_find(objs, a);
	const char *sym = o ? hs_object_symbol(o, a) : NULL;
	Dl_info info;

	sys[0] = '\0';
	if (sym) {
		/* without the symbol version (memcpy@@GLIBC_2.14) */
		hs_snprintf(name, NAME_MAX_LEN, "%s", sym);
		name[strcspn(name, "@")] = '\0';
		demangle(name, sys);
		return;
	}
	if (dladdr((void *)(uintptr_t)a, &info) && info.dli_sname &&
	    info.dli_saddr) {
		hs_snprintf(name, NAME_MAX_LEN, "%s", info.dli_sname);
		name[strcspn(name, "@")] = '\0';
		demangle(name, sys);
		return;
	}
	if (o)
		hs_snprintf(name, NAME_MAX_LEN, "%s+0x%lx", base_name(o->path),
			    (unsigned long)(a - o->bias));
	else
		hs_snprintf(name, NAME_MAX_LEN, "0x%lx", (unsigned long)a);
}

static int64_t value_of(const struct heapscope_profile *p,
			const struct heapscope_sample *s)
{
	if (p->kind == HEAPSCOPE_PROFILE_LIFETIME)
		return (int64_t)s->lifetime_ns;
	return (int64_t)s->bytes_estimate;
}

/* ---- folded: one line per distinct stack ---- */

/* A distinct stack: first by its frames (rep: a sample that has them),
 * then by its text (text[off, off + len) in the arena). */
struct line {
	const struct heapscope_sample *rep;
	size_t off, len;
	int64_t value;
};

typedef int (*line_cmp)(const struct line *, const struct line *,
			const char *arena);

/* Heap sort (no allocation: the arrays are mmap'd). */
static void sift(struct line *a, size_t i, size_t n, line_cmp cmp,
		 const char *arena)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct line t;

		if (c >= n)
			return;
		if (c + 1 < n && cmp(&a[c + 1], &a[c], arena) > 0)
			c++;
		if (cmp(&a[c], &a[i], arena) <= 0)
			return;
		t = a[i];
		a[i] = a[c];
		a[c] = t;
		i = c;
	}
}

static void sort_lines(struct line *a, size_t n, line_cmp cmp,
		       const char *arena)
{
	for (size_t i = n / 2; i-- > 0;)
		sift(a, i, n, cmp, arena);
	for (size_t k = n; k-- > 1;) {
		struct line t = a[0];

		a[0] = a[k];
		a[k] = t;
		sift(a, 0, k, cmp, arena);
	}
}

static int by_frames(const struct line *x, const struct line *y,
		     const char *arena)
{
	(void)arena;
	if (x->rep->depth != y->rep->depth)
		return x->rep->depth < y->rep->depth ? -1 : 1;
	return memcmp(x->rep->stack, y->rep->stack,
		      x->rep->depth * sizeof(x->rep->stack[0]));
}

static int by_text(const struct line *x, const struct line *y,
		   const char *arena)
{
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(arena + x->off, arena + y->off, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Heaviest first, ties by text: the order of the collector's output. */
static int by_value(const struct line *x, const struct line *y,
		    const char *arena)
{
	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	return by_text(x, y, arena);
}

/* The folded text of s ("outer;...;leaf") into arena + off (NULL: only
 * measured); its length. */
static size_t stack_text(struct hs_objects *objs,
			 const struct heapscope_sample *s, char *arena)
{
	char name[NAME_MAX_LEN], sys[NAME_MAX_LEN];
	size_t n = 0;

	if (s->depth == 0) {
		if (arena)
			memcpy(arena, "[unknown]", 9);
		return 9;
	}
	for (uint32_t f = s->depth; f-- > 0;) {
		size_t k;

		symbolize(objs, s->stack[f], name, sys);
		k = strlen(name);
		if (arena) {
			/* ';' separates frames, '\n' lines (as the
			 * collector's folded output) */
			for (size_t i = 0; i < k; i++)
				arena[n + i] = name[i] == ';' || name[i] == '\n'
						       ? '_'
						       : name[i];
			if (f)
				arena[n + k] = ';';
		}
		n += k + (f ? 1 : 0);
	}
	return n;
}

/* Merge neighbours of a sorted lines[] that cmp finds equal (values
 * summed); the new count. */
static size_t merge(struct line *l, size_t n, line_cmp cmp, const char *arena)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (k && !cmp(&l[k - 1], &l[i], arena))
			l[k - 1].value += l[i].value;
		else
			l[k++] = l[i];
	}
	return k;
}

static int write_folded(const struct heapscope_profile *p, int fd)
{
	size_t lbytes = PAGE_UP((p->count + 1) * sizeof(struct line));
	size_t n = p->count, abytes = 0, used = 0;
	struct line *l = hs_os_alloc(lbytes, 4096);
	struct out *o = malloc(sizeof(*o));
	struct hs_objects objs;
	char *arena = NULL;
	int r = -ENOMEM;

	if (!l || !o || hs_objects_load(&objs))
		goto out_nobjs;
	for (size_t i = 0; i < n; i++)
		l[i] = (struct line){&p->samples[i], 0, 0,
				     value_of(p, &p->samples[i])};
	/* equal frames first (cheap), then equal names: two call sites in
	 * one function are one stack */
	sort_lines(l, n, by_frames, NULL);
	n = merge(l, n, by_frames, NULL);
	for (size_t i = 0; i < n; i++)
		abytes += stack_text(&objs, l[i].rep, NULL);
	abytes = PAGE_UP(abytes + 1);
	arena = hs_os_alloc(abytes, 4096);
	if (!arena)
		goto out;
	for (size_t i = 0; i < n; i++) {
		l[i].off = used;
		l[i].len = stack_text(&objs, l[i].rep, arena + used);
		used += l[i].len;
	}
	sort_lines(l, n, by_text, arena);
	n = merge(l, n, by_text, arena);
	sort_lines(l, n, by_value, arena);
	o->fd = fd;
	o->err = 0;
	o->len = 0;
	for (size_t i = 0; i < n && !o->err; i++) {
		char num[32];
		int k = hs_snprintf(num, sizeof(num), " %ld\n",
				    (long)l[i].value);

		out_str(o, arena + l[i].off, l[i].len);
		out_str(o, num, (size_t)k);
	}
	out_flush(o);
	r = o->err;
out:
	hs_objects_free(&objs);
out_nobjs:
	if (arena)
		hs_os_unmap(arena, abytes);
	if (l)
		hs_os_unmap(l, lbytes);
	free(o);
	return r;
}

/* ---- pprof ---- */

/* Mapping ids of the objects' segments, in objs order (the program
 * first): ids[i * HS_OBJ_MAX_SEGS + k] for segment k of object i. */
static int add_mappings(struct pprof_builder *b, struct hs_objects *objs,
			uint64_t *ids)
{
	for (int i = 0; i < objs->n; i++) {
		struct hs_object *o = &objs->o[i];

		for (int k = 0; k < o->nseg; k++) {
			ids[i * HS_OBJ_MAX_SEGS + k] = pprof_add_mapping(
				b, o->seg[k].start, o->seg[k].limit,
				o->seg[k].offset, o->path,
				o->build_id[0] ? o->build_id : NULL, 1, 0);
			if (!ids[i * HS_OBJ_MAX_SEGS + k])
				return -ENOMEM;
		}
	}
	return 0;
}

static uint64_t mapping_of(struct hs_objects *objs, const uint64_t *ids,
			   uint64_t pc)
{
	for (int i = 0; i < objs->n; i++)
		for (int k = 0; k < objs->o[i].nseg; k++)
			if (pc >= objs->o[i].seg[k].start &&
			    pc < objs->o[i].seg[k].limit)
				return ids[i * HS_OBJ_MAX_SEGS + k];
	return 0;
}

static uint64_t location_of(struct pprof_builder *b, struct hs_objects *objs,
			    const uint64_t *ids, uint64_t pc)
{
	uint64_t a = pc ? pc - 1 : 0, id = pprof_location_find(b, a);
	char name[NAME_MAX_LEN], sys[NAME_MAX_LEN];
	struct pprof_line line = { 0, 0 };

	if (id)
		return id;
	symbolize(objs, pc, name, sys);
	line.function_id = pprof_function_sys(b, name, sys[0] ? sys : NULL,
					      NULL);
	if (!line.function_id)
		return 0;
	return pprof_location(b, mapping_of(objs, ids, a), a, &line, 1);
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
	size_t ibytes = PAGE_UP(MAX_IDS * sizeof(uint64_t));
	uint64_t *ids = hs_os_alloc(ibytes, 4096);
	uint64_t locs[HEAPSCOPE_MAX_FRAMES];
	struct hs_objects objs = { 0 };
	char comment[160];
	uint8_t *data = NULL;
	size_t len = 0;
	int r = -ENOMEM;

	if (!b || !ids || hs_objects_load(&objs))
		goto out;
	r = setup_types(b, p);
	if (!r)
		r = add_mappings(b, &objs, ids);
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
			locs[n] = location_of(b, &objs, ids, s->stack[f]);
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
	hs_objects_free(&objs);
	if (ids)
		hs_os_unmap(ids, ibytes);
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
