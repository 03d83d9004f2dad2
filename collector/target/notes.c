// SPDX-License-Identifier: MIT
/*
 * notes.c - which probes an object carries: its .note.stapsdt read with
 * libelf, every note bounds-checked (the file comes from the target and
 * is not trusted), as HS_NOTE_* bits; what those bits mean per provider.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "target.h"

/* HS_NOTE_* bit of one probe (provider, name), 0 if not one of ours. */
static unsigned note_bit(const char *provider, const char *name)
{
	if (!strcmp(provider, HEAPSCOPE_PROVIDER))
		return !strcmp(name, "sample_alloc") ? HS_NOTE_HEAPSCOPE : 0;
	if (!strcmp(provider, HEAPSCOPE_COMPAT_OTEL))
		return !strcmp(name, "alloc")  ? HS_NOTE_OTEL_ALLOC
		       : !strcmp(name, "free") ? HS_NOTE_OTEL_FREE
					       : 0;
	if (!strcmp(provider, HEAPSCOPE_COMPAT_DDHEAP))
		return !strcmp(name, "alloc")  ? HS_NOTE_DD_ALLOC
		       : !strcmp(name, "free") ? HS_NOTE_DD_FREE
					       : 0;
	return 0;
}

unsigned hs_elf_probe_notes(const char *path)
{
	Elf_Scn *scn = NULL;
	unsigned found = 0;
	size_t shstrndx;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF ||
	    elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *data;
		const char *name;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.stapsdt"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off,
					   &desc_off)) > 0) {
			const char *desc = (const char *)data->d_buf + desc_off;
			size_t addr_bytes = 3 * 8; /* pc, base, semaphore */
			size_t rest, plen, nlen;
			const char *prov, *pname;

			/* gelf_getnote checked that name and desc lie in
			 * the section; the strings inside desc are ours to
			 * bound. */
			if (nh.n_type != 3 ||
			    nh.n_namesz != sizeof("stapsdt") ||
			    memcmp((const char *)data->d_buf + name_off,
				   "stapsdt", sizeof("stapsdt")) ||
			    nh.n_descsz <= addr_bytes)
				continue;
			prov = desc + addr_bytes;
			rest = nh.n_descsz - addr_bytes;
			plen = strnlen(prov, rest);
			if (plen >= rest)
				continue;
			pname = prov + plen + 1;
			rest -= plen + 1;
			nlen = strnlen(pname, rest);
			if (nlen >= rest)
				continue;
			found |= note_bit(prov, pname);
		}
	}
out:
	elf_end(elf);
	close(fd);
	return found;
}

bool hs_elf_has_heapscope_note(const char *path)
{
	return hs_elf_probe_notes(path) & HS_NOTE_HEAPSCOPE;
}

bool hs_notes_have_alloc(unsigned notes, enum hs_provider p)
{
	switch (p) {
	case HS_PROVIDER_HEAPSCOPE:
		return notes & HS_NOTE_HEAPSCOPE;
	case HS_PROVIDER_OTEL:
		return notes & HS_NOTE_OTEL_ALLOC;
	case HS_PROVIDER_DDHEAP:
		return notes & HS_NOTE_DD_ALLOC;
	default:
		return false;
	}
}

bool hs_notes_have_free(unsigned notes, enum hs_provider p)
{
	switch (p) {
	case HS_PROVIDER_HEAPSCOPE:
		return notes & HS_NOTE_HEAPSCOPE;
	case HS_PROVIDER_OTEL:
		return notes & HS_NOTE_OTEL_FREE;
	case HS_PROVIDER_DDHEAP:
		return notes & HS_NOTE_DD_FREE;
	default:
		return false;
	}
}

enum hs_provider hs_notes__choose(unsigned notes, enum hs_provider p)
{
	if (p != HS_PROVIDER_AUTO)
		return hs_notes_have_alloc(notes, p) ? p : HS_PROVIDER_AUTO;
	if (notes & HS_NOTE_HEAPSCOPE)
		return HS_PROVIDER_HEAPSCOPE;
	if (notes & HS_NOTE_OTEL_ALLOC)
		return HS_PROVIDER_OTEL;
	if (notes & HS_NOTE_DD_ALLOC)
		return HS_PROVIDER_DDHEAP;
	return HS_PROVIDER_AUTO;
}
