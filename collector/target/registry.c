// SPDX-License-Identifier: MIT
/*
 * registry.c - reading the target's registry of live sampled allocations
 * (struct heapscope_registry, include/heapscope/abi.h) so samples taken
 * before the attach are part of the profile.  The target is not trusted:
 * every header field and record is validated, the seqlock is retried a
 * bounded number of times, and reads go through a reader callback so the
 * parser is testable against crafted buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "target.h"

#define CHUNK_RECORDS 256

int hs_registry__read_process(void *ctx, uint64_t addr, void *dst, size_t len)
{
	pid_t pid = *(pid_t *)ctx;
	struct iovec local = {.iov_base = dst, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr,
			       .iov_len = len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int check_header(const struct heapscope_registry *h, uint64_t addr)
{
	uint64_t bytes, end;

	if (h->magic != HEAPSCOPE_REGISTRY_MAGIC ||
	    h->version != HEAPSCOPE_REGISTRY_VERSION ||
	    h->header_size != sizeof(struct heapscope_registry) ||
	    h->record_size != sizeof(struct heapscope_record) ||
	    h->max_frames != HEAPSCOPE_MAX_FRAMES)
		return -EBADMSG;
	if (h->capacity > HS_REGISTRY_MAX_CAPACITY ||
	    h->high_water > h->capacity || h->live > h->high_water)
		return -EBADMSG;
	if (!h->capacity)
		return 0;
	if (!h->records || h->records % 8)
		return -EBADMSG;
	bytes = h->capacity * sizeof(struct heapscope_record);
	end = h->records + bytes;
	if (end < h->records)
		return -EBADMSG; /* wraps */
	/* The record array must not overlap (loop back onto) the header. */
	if (h->records < addr + sizeof(*h) && addr < end)
		return -EBADMSG;
	return 0;
}

static int read_gen(hs_mem_read_fn rd, void *ctx, uint64_t addr, uint64_t *gen)
{
	return rd(ctx, addr + offsetof(struct heapscope_registry, generation),
		  gen, sizeof(*gen));
}

static int cmp_seq(const void *a, const void *b)
{
	const struct heapscope_record *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * One attempt: 0, -EAGAIN (writer active / changed), or a hard error.
 * per_record: do not wait for a quiet generation; accept a record when its
 * seq reads the same before (seq is the first field copied) and after the
 * copy.  Writers store seq last and clear it first, and seqs never repeat,
 * so an unchanged non-zero seq means the copy is of one incarnation.  That
 * is all the collector needs: the probes are attached before the registry
 * is read, so changes during the read also arrive as events.
 */
static int read_once(hs_mem_read_fn rd, void *ctx, uint64_t addr,
		     struct hs_registry_snapshot *out,
		     struct heapscope_record *chunk, bool per_record)
{
	struct heapscope_registry h;
	uint64_t gen2;
	size_t n = 0, keep = 0, cap = 0;
	int err;

	err = rd(ctx, addr, &h, sizeof(h));
	if (err)
		return err;
	err = check_header(&h, addr);
	if (err)
		return err;
	if ((h.generation & 1) && !per_record)
		return -EAGAIN;
	free(out->recs);
	out->recs = NULL;
	out->n = 0;
	out->invalid = 0;
	for (uint64_t i = 0; i < h.high_water; i += CHUNK_RECORDS) {
		uint64_t cnt = h.high_water - i;

		if (cnt > CHUNK_RECORDS)
			cnt = CHUNK_RECORDS;
		err = rd(ctx, h.records + i * sizeof(*chunk), chunk,
			 cnt * sizeof(*chunk));
		if (err)
			return err;
		for (uint64_t j = 0; j < cnt; j++) {
			const struct heapscope_record *r = &chunk[j];

			if (!r->seq)
				continue;
			/* Per-record copies race with writers: a record newer
			 * than the header is not corrupt, and its event comes
			 * through the ring buffer. */
			if (per_record && h.next_seq && r->seq >= h.next_seq)
				continue;
			if (r->depth > HEAPSCOPE_MAX_FRAMES ||
			    (h.next_seq && r->seq >= h.next_seq) ||
			    !r->weight) {
				out->invalid++;
				continue;
			}
			if (per_record) {
				uint64_t again;
				uint64_t at = h.records + (i + j) * sizeof(*r);

				err = rd(ctx, at, &again, sizeof(again));
				if (err)
					return err;
				if (again != r->seq)
					continue; /* changed: events cover it */
			} else if (n == h.live) {
				/* More live slots than `live` says: torn. */
				return -EAGAIN;
			}
			/* Grow with what is found, not with what the
			 * target claims. */
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct heapscope_record *nr =
					realloc(out->recs, ncap * sizeof(*nr));

				if (!nr)
					return -ENOMEM;
				out->recs = nr;
				cap = ncap;
			}
			out->recs[n++] = *r;
		}
	}
	err = read_gen(rd, ctx, addr, &gen2);
	if (err)
		return err;
	if (gen2 != h.generation && !per_record)
		return -EAGAIN;
	/* Duplicate record ids are corrupt: keep the first of each. */
	if (n > 1)
		qsort(out->recs, n, sizeof(*out->recs), cmp_seq);
	for (size_t i = 0; i < n; i++) {
		if (keep && out->recs[keep - 1].seq == out->recs[i].seq) {
			out->invalid++;
			continue;
		}
		out->recs[keep++] = out->recs[i];
	}
	out->hdr = h;
	out->n = keep;
	return 0;
}

int hs_registry__read(hs_mem_read_fn rd, void *rd_ctx, uint64_t addr,
		      struct hs_registry_snapshot *out)
{
	struct heapscope_record *chunk;
	int err = -EAGAIN;

	memset(out, 0, sizeof(*out));
	chunk = malloc(CHUNK_RECORDS * sizeof(*chunk));
	if (!chunk)
		return -ENOMEM;
	for (unsigned i = 0; i < HS_REGISTRY_MAX_RETRIES; i++) {
		err = read_once(rd, rd_ctx, addr, out, chunk, false);
		out->retries = i;
		if (err != -EAGAIN)
			break;
		usleep(100 * (i + 1));
	}
	/* A busy target may never show a quiet generation over the whole
	 * array: fall back to per-record consistency, once. */
	if (err == -EAGAIN) {
		err = read_once(rd, rd_ctx, addr, out, chunk, true);
		out->per_record = !err;
	}
	free(chunk);
	if (err)
		hs_registry__free(out);
	return err;
}

void hs_registry__free(struct hs_registry_snapshot *s)
{
	free(s->recs);
	s->recs = NULL;
	s->n = 0;
}

/* Find object symbol `symbol` in .dynsym (then .symtab) and the lowest
 * PT_LOAD address, via libelf. */
static int find_symbol(const char *path, const char *symbol, uint64_t *value,
		       uint64_t *load_vaddr, int *is_dyn)
{
	Elf_Scn *scn = NULL;
	size_t phnum;
	Elf *elf;
	int fd, err = -ENOENT;
	uint64_t lowest = UINT64_MAX;
	bool found = false;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out_elf;
	}
	if (elf_getphdrnum(elf, &phnum)) {
		err = -ENOEXEC;
		goto out_elf;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_vaddr - ph.p_offset < lowest)
			lowest = ph.p_vaddr - ph.p_offset;
	}
	{
		GElf_Ehdr eh;

		if (!gelf_getehdr(elf, &eh)) {
			err = -ENOEXEC;
			goto out_elf;
		}
		*is_dyn = eh.e_type == ET_DYN;
	}
	for (int pass = 0; pass < 2 && !found; pass++) {
		Elf64_Word want = pass == 0 ? SHT_DYNSYM : SHT_SYMTAB;

		scn = NULL;
		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			size_t cnt;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want ||
			    !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			if (!data)
				continue;
			cnt = sh.sh_size / sh.sh_entsize;
			for (size_t i = 0; i < cnt; i++) {
				GElf_Sym sym;
				const char *name;

				if (!gelf_getsym(data, i, &sym) ||
				    sym.st_shndx == SHN_UNDEF ||
				    GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
					continue;
				name = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (name && !strcmp(name, symbol)) {
					*value = sym.st_value;
					found = true;
					break;
				}
			}
		}
	}
	if (found && lowest != UINT64_MAX) {
		*load_vaddr = lowest;
		err = 0;
	}
out_elf:
	elf_end(elf);
	close(fd);
	return err;
}

int hs_registry__locate(const struct hs_target *t, uint64_t *addr)
{
	return hs_target__symbol(t, HEAPSCOPE_REGISTRY_SYMBOL, addr);
}

int hs_target__symbol(const struct hs_target *t, const char *name,
		      uint64_t *addr)
{
	uint64_t value = 0, load_vaddr = 0;
	int is_dyn = 0;
	int err;

	err = find_symbol(t->open_path, name, &value, &load_vaddr, &is_dyn);
	if (err)
		return err;
	/* The mapping at file offset 0 corresponds to the lowest segment's
	 * vaddr - offset; ET_EXEC is not relocated. */
	*addr = is_dyn ? t->map_start - load_vaddr + value : value;
	return 0;
}

int hs_registry__read_header(pid_t pid, uint64_t addr,
			     struct heapscope_registry *h)
{
	struct iovec local = {h, sizeof(*h)}, remote = {(void *)addr,
							 sizeof(*h)};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	if ((size_t)n != sizeof(*h) || h->magic != HEAPSCOPE_REGISTRY_MAGIC ||
	    h->version != HEAPSCOPE_REGISTRY_VERSION ||
	    h->header_size != sizeof(*h))
		return -EBADMSG;
	return 0;
}
