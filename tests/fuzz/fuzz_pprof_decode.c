// SPDX-License-Identifier: MIT
/*
 * fuzz_pprof_decode.c - libFuzzer target for common/pprof_decode.c, the
 * reader of the untrusted profiles `heapscope symbolize` takes: any input
 * is decoded or refused without a read out of bounds, a leak or undefined
 * behaviour, and a decoded profile's every string index resolves
 * (pprof_d_str) and every sample has as many values as sample types.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pprof_decode.h"

static size_t touch(const struct pprof_profile *p, int64_t i)
{
	return strlen(pprof_d_str(p, i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_profile *p;
	size_t n = 0;

	if (pprof_decode(data, size, &p))
		return 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pprof_d_sample *s = &p->samples[i];

		if (s->nvalues != p->nsample_types)
			abort();
		for (size_t k = 0; k < s->nlabels; k++)
			n += touch(p, s->labels[k].key) +
			     touch(p, s->labels[k].str) +
			     touch(p, s->labels[k].num_unit);
	}
	for (size_t i = 0; i < p->nmappings; i++)
		n += touch(p, p->mappings[i].filename) +
		     touch(p, p->mappings[i].build_id);
	for (size_t i = 0; i < p->nfunctions; i++)
		n += touch(p, p->functions[i].name) +
		     touch(p, p->functions[i].system_name) +
		     touch(p, p->functions[i].filename);
	for (size_t i = 0; i < p->nlocations; i++)
		for (size_t k = 0; k < p->locations[i].nlines; k++)
			n += (size_t)p->locations[i].lines[k].line;
	for (size_t i = 0; i < p->ncomments; i++)
		n += touch(p, p->comments[i]);
	pprof_profile_free(p);
	return n == (size_t)-1; /* keep n alive */
}
