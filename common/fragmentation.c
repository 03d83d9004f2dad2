// SPDX-License-Identifier: MIT
/*
 * common/fragmentation.c - the fragmentation attribution (formula and
 * source in fragmentation.h).
 */
#include "fragmentation.h"

bool hs_frag_usable(uint64_t a, uint64_t span_bytes, uint64_t span_live,
		    uint64_t span_objects)
{
	return span_live && span_bytes && a && span_live <= span_objects &&
	       span_live <= span_bytes / a;
}

uint64_t hs_frag_age(uint64_t now, uint64_t time_ns)
{
	return time_ns && time_ns < now ? now - time_ns : 0;
}

double hs_frag_bytes(double count, uint64_t a, uint64_t span_bytes,
		     uint64_t span_live)
{
	double share = (double)(span_bytes - span_live * a) / span_live;

	return count * share;
}

void hs_frag_class_add(struct hs_frag_class *k, double frag, uint64_t age)
{
	k->cw += frag;
	k->ctw += frag * (double)age;
}

double hs_frag_age_bytes(const struct hs_frag_class *k, double frag,
			 uint64_t age)
{
	double tc = k->cw > 0 ? k->ctw / k->cw : 0;

	return tc > 0 ? frag * (double)age / tc : 0;
}
