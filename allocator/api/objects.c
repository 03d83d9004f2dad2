// SPDX-License-Identifier: MIT
/*
 * allocator/api/objects.c - the objects loaded in this process (for
 * profile_write.c): dl_iterate_phdr gives each object's load bias and
 * program headers, so its executable PT_LOAD segments (page-aligned, as
 * /proc/self/maps shows them) and its GNU build id (the PT_NOTE in
 * memory); the program's own path is /proc/self/exe's target.  Function
 * names come from the object's .symtab (else .dynsym) in the file on
 * disk, mapped read-only and parsed with every offset and size checked
 * against the file (a file replaced since it was loaded, whose build id
 * differs, is not used).  Memory is mmap'd (base/os.c), never malloc'd:
 * this runs at exit and from the API, and must not re-enter the heap it
 * describes.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/objects.h"
#include "base/os.h"

#define DELETED " (deleted)"

#define PAGE_UP(x) (((x) + 4095) & ~(size_t)4095)

struct hs_obj_sym {
	uint64_t addr, size; /* runtime address, bytes (0: unknown) */
	uint32_t name;	     /* offset in the string table */
};

/* The GNU build id in the notes buf[0, len) (align: the segment's or
 * section's alignment, 4 or 8) into hex out; false if none. */
static bool note_build_id(const char *buf, size_t len, size_t align, char *out)
{
	size_t off = 0, a = align == 8 ? 7 : 3;

	while (off <= len && len - off >= sizeof(ElfW(Nhdr))) {
		ElfW(Nhdr) nh;
		size_t desc_off, next;

		memcpy(&nh, buf + off, sizeof(nh));
		/* as gABI: desc and the next note start aligned */
		if (nh.n_namesz > len || nh.n_descsz > len)
			return false;
		desc_off = (off + sizeof(nh) + nh.n_namesz + a) & ~a;
		if (desc_off > len || nh.n_descsz > len - desc_off)
			return false;
		next = (desc_off + nh.n_descsz + a) & ~a;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(buf + off + sizeof(nh), "GNU", 4) && nh.n_descsz) {
			static const char hex[] = "0123456789abcdef";
			size_t n = nh.n_descsz < HS_OBJ_BUILD_ID
					   ? nh.n_descsz
					   : HS_OBJ_BUILD_ID;
			const unsigned char *d =
				(const unsigned char *)buf + desc_off;

			for (size_t i = 0; i < n; i++) {
				out[2 * i] = hex[d[i] >> 4];
				out[2 * i + 1] = hex[d[i] & 15];
			}
			out[2 * n] = '\0';
			return true;
		}
		if (next <= off)
			return false;
		off = next;
	}
	return false;
}

static void strip_deleted(char *path)
{
	size_t len = strlen(path), sl = strlen(DELETED);

	if (len > sl && !strcmp(path + len - sl, DELETED))
		path[len - sl] = '\0';
}

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct hs_objects *t = arg;
	uint64_t page = getauxval(AT_PAGESZ) ? getauxval(AT_PAGESZ) : 4096;
	bool main = !info->dlpi_name || !info->dlpi_name[0];
	struct hs_object *o;

	(void)size;
	if (t->n >= t->cap)
		return 1;
	o = &t->o[t->n];
	memset(o, 0, sizeof(*o));
	o->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE && !o->build_id[0])
			note_build_id(
				(const char *)(uintptr_t)(info->dlpi_addr +
							  ph->p_vaddr),
				ph->p_memsz, ph->p_align, o->build_id);
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    o->nseg == HS_OBJ_MAX_SEGS)
			continue;
		/* the kernel maps whole pages: round as /proc/self/maps */
		o->seg[o->nseg].start =
			(info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		o->seg[o->nseg].limit = (info->dlpi_addr + ph->p_vaddr +
					 ph->p_memsz + page - 1) &
					~(page - 1);
		o->seg[o->nseg].offset = ph->p_offset & ~(page - 1);
		o->nseg++;
	}
	if (!o->nseg)
		return 0;
	if (main) {
		ssize_t n = readlink("/proc/self/exe", o->path,
				     sizeof(o->path) - 1);

		o->path[n > 0 ? n : 0] = '\0';
		strip_deleted(o->path);
		o->main = true;
	} else if (info->dlpi_name[0] == '/') {
		size_t n = strlen(info->dlpi_name);

		if (n >= sizeof(o->path))
			return 0;
		memcpy(o->path, info->dlpi_name, n + 1);
	} else {
		return 0; /* the vDSO: no file */
	}
	t->n++;
	return 0;
}

int hs_objects_load(struct hs_objects *t)
{
	memset(t, 0, sizeof(*t));
	t->bytes = PAGE_UP(HS_OBJ_MAX * sizeof(struct hs_object));
	t->o = hs_os_alloc(t->bytes, 4096);
	if (!t->o)
		return -ENOMEM;
	t->cap = HS_OBJ_MAX;
	dl_iterate_phdr(add_object, t);
	/* the name /proc/self/maps shows (symlinks resolved: /lib -> /usr/lib
	 * on merged-/usr systems), outside the loader's lock */
	for (int i = 0; i < t->n; i++) {
		char rp[PATH_MAX];

		if (!t->o[i].main && realpath(t->o[i].path, rp) &&
		    strlen(rp) < sizeof(t->o[i].path))
			memcpy(t->o[i].path, rp, strlen(rp) + 1);
	}
	/* the program first (pprof's mapping 1); glibc reports it first
	 * already, this keeps it so for any loader */
	for (int i = 1; i < t->n; i++) {
		if (t->o[i].main) {
			struct hs_object tmp = t->o[0];

			t->o[0] = t->o[i];
			t->o[i] = tmp;
			break;
		}
	}
	return 0;
}

void hs_objects_free(struct hs_objects *t)
{
	for (int i = 0; i < t->n; i++) {
		struct hs_object *o = &t->o[i];

		if (o->syms)
			hs_os_unmap((void *)o->syms, o->syms_bytes);
		if (o->file)
			hs_os_unmap((void *)o->file, o->file_len);
	}
	hs_os_unmap(t->o, t->bytes);
	memset(t, 0, sizeof(*t));
}

struct hs_object *hs_objects_find(struct hs_objects *t, uint64_t pc)
{
	for (int i = 0; i < t->n; i++)
		for (int k = 0; k < t->o[i].nseg; k++)
			if (pc >= t->o[i].seg[k].start &&
			    pc < t->o[i].seg[k].limit)
				return &t->o[i];
	return NULL;
}

/* Section header i of the file, NULL if outside it. */
static const ElfW(Shdr) *
	section(const struct hs_object *o, const ElfW(Ehdr) * eh, size_t i)
{
	if (i >= eh->e_shnum)
		return NULL;
	return (const ElfW(Shdr) *)(o->file + eh->e_shoff +
				    i * sizeof(ElfW(Shdr)));
}

static bool within(const struct hs_object *o, uint64_t off, uint64_t size)
{
	return off <= o->file_len && size <= o->file_len - off;
}

/* Does the file's build id (its SHT_NOTE sections) equal the loaded
 * one's?  Without a build id in memory there is nothing to compare. */
static bool same_build(const struct hs_object *o, const ElfW(Ehdr) * eh)
{
	char id[sizeof(o->build_id)];

	if (!o->build_id[0])
		return true;
	for (size_t i = 0; i < eh->e_shnum; i++) {
		const ElfW(Shdr) *sh = section(o, eh, i);

		if (sh->sh_type != SHT_NOTE ||
		    !within(o, sh->sh_offset, sh->sh_size))
			continue;
		id[0] = '\0';
		if (note_build_id(o->file + sh->sh_offset, sh->sh_size,
				  sh->sh_addralign, id))
			return !strcmp(id, o->build_id);
	}
	return false;
}

/* Heap sort of the symbols by address: no allocation, O(n log n). */
static void sift(struct hs_obj_sym *a, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct hs_obj_sym t;

		if (c >= n)
			return;
		if (c + 1 < n && a[c + 1].addr > a[c].addr)
			c++;
		if (a[c].addr <= a[i].addr)
			return;
		t = a[i];
		a[i] = a[c];
		a[c] = t;
		i = c;
	}
}

static void sort_syms(struct hs_obj_sym *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift(a, i, n);
	for (size_t k = n; k-- > 1;) {
		struct hs_obj_sym t = a[0];

		a[0] = a[k];
		a[k] = t;
		sift(a, 0, k);
	}
}

static bool is_function(const ElfW(Sym) * sym)
{
	int type = ELF64_ST_TYPE(sym->st_info); /* = ELF32_ST_TYPE */

	return (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	       sym->st_shndx != SHN_UNDEF && sym->st_value != 0;
}

/* Collect the functions of symbol section sh (its strings in section
 * sh_link): 0, or -1 when the section is malformed or empty. */
static int read_table(struct hs_object *o, const ElfW(Ehdr) * eh,
		      const ElfW(Shdr) * sh)
{
	const ElfW(Shdr) *str = section(o, eh, sh->sh_link);
	const ElfW(Sym) * sym;
	struct hs_obj_sym *out;
	size_t n, k = 0;

	if (!str || str->sh_type != SHT_STRTAB ||
	    sh->sh_entsize != sizeof(ElfW(Sym)) ||
	    !within(o, sh->sh_offset, sh->sh_size) ||
	    !within(o, str->sh_offset, str->sh_size) || !str->sh_size ||
	    sh->sh_offset % _Alignof(ElfW(Sym)))
		return -1;
	sym = (const ElfW(Sym) *)(o->file + sh->sh_offset);
	n = sh->sh_size / sizeof(ElfW(Sym));
	o->strtab = o->file + str->sh_offset;
	o->strtab_len = str->sh_size;
	for (size_t i = 0; i < n; i++)
		k += is_function(&sym[i]) && sym[i].st_name < o->strtab_len;
	if (!k)
		return -1;
	if (o->syms) /* an earlier table that named nothing */
		hs_os_unmap((void *)o->syms, o->syms_bytes);
	o->syms = NULL;
	o->syms_bytes = PAGE_UP(k * sizeof(*out));
	out = hs_os_alloc(o->syms_bytes, 4096);
	if (!out)
		return -1;
	k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *name = o->strtab + sym[i].st_name;

		if (!is_function(&sym[i]) || sym[i].st_name >= o->strtab_len ||
		    !memchr(name, '\0', o->strtab_len - sym[i].st_name) ||
		    !*name)
			continue;
		out[k++] = (struct hs_obj_sym){o->bias + sym[i].st_value,
					       sym[i].st_size, sym[i].st_name};
	}
	sort_syms(out, k);
	o->syms = out;
	o->nsyms = k;
	return k ? 0 : -1;
}

/* Map path as o's file (unmapping the previous one): its ELF header once
 * checked (native class, section headers inside the file, the build id
 * of the loaded object), or NULL. */
static const ElfW(Ehdr) * map_elf(struct hs_object *o, const char *path)
{
	const ElfW(Ehdr) * eh;
	struct stat st;
	int fd;

	if (o->file)
		hs_os_unmap((void *)o->file, o->file_len);
	o->file = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
		close(fd);
		return NULL;
	}
	o->file_len = (size_t)st.st_size;
	o->file = hs_os_map_file(fd, o->file_len);
	close(fd);
	if (!o->file)
		return NULL;
	eh = (const ElfW(Ehdr) *)o->file;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] !=
		    (__ELF_NATIVE_CLASS == 64 ? ELFCLASS64 : ELFCLASS32) ||
	    eh->e_shentsize != sizeof(ElfW(Shdr)) || !eh->e_shnum ||
	    eh->e_shoff % _Alignof(ElfW(Shdr)) ||
	    !within(o, eh->e_shoff,
		    (uint64_t)eh->e_shnum * sizeof(ElfW(Shdr))) ||
	    !same_build(o, eh))
		return NULL;
	return eh;
}

/* The SHT_SYMTAB section of eh (with want SHT_DYNSYM: that one), NULL. */
static const ElfW(Shdr) * find_table(const struct hs_object *o,
				     const ElfW(Ehdr) * eh, uint32_t want)
{
	for (size_t i = 0; i < eh->e_shnum; i++) {
		const ElfW(Shdr) *sh = section(o, eh, i);

		if (sh->sh_type == want)
			return sh;
	}
	return NULL;
}

/* Read the object's function symbols: the file's .symtab; for a stripped
 * file the .symtab of its separate debug file found by build id under
 * /usr/lib/debug/.build-id/ (Debian's -dbg and -dbgsym packages); else
 * the file's .dynsym.  0, or -1 (sym_state -1: profile_write falls back
 * to dladdr). */
static int read_symbols(struct hs_object *o)
{
	const char *path = o->main ? "/proc/self/exe" : o->path;
	const ElfW(Ehdr) *eh = map_elf(o, path);
	const ElfW(Shdr) * tab;
	char dbg[40 + sizeof(o->build_id)];

	if (!eh)
		return -1;
	tab = find_table(o, eh, SHT_SYMTAB);
	if (tab)
		return read_table(o, eh, tab);
	if (strlen(o->build_id) > 2) {
		const ElfW(Ehdr) * deh;

		memcpy(dbg, "/usr/lib/debug/.build-id/", 25);
		memcpy(dbg + 25, o->build_id, 2);
		dbg[27] = '/';
		memcpy(dbg + 28, o->build_id + 2, strlen(o->build_id) - 2);
		memcpy(dbg + 28 + strlen(o->build_id) - 2, ".debug", 7);
		deh = map_elf(o, dbg);
		tab = deh ? find_table(o, deh, SHT_SYMTAB) : NULL;
		if (tab && !read_table(o, deh, tab))
			return 0;
		eh = map_elf(o, path);
		if (!eh)
			return -1;
	}
	tab = find_table(o, eh, SHT_DYNSYM);
	return tab ? read_table(o, eh, tab) : -1;
}

const char *hs_object_symbol(struct hs_object *o, uint64_t pc)
{
	size_t lo = 0, hi;
	const struct hs_obj_sym *s;

	if (!o->sym_state)
		o->sym_state = read_symbols(o) ? -1 : 1;
	if (o->sym_state < 0)
		return NULL;
	/* the last symbol at or below pc */
	hi = o->nsyms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (o->syms[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* a sized function that covers pc, looking past size-0 markers and
	 * aliases just below it; else the nearest size-0 symbol */
	for (size_t i = lo, k = 0; i-- > 0 && k < 16; k++) {
		s = &o->syms[i];
		if (s->size && pc - s->addr < s->size)
			return o->strtab + s->name;
	}
	s = &o->syms[lo - 1];
	return s->size ? NULL : o->strtab + s->name;
}
