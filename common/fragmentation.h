/* SPDX-License-Identifier: MIT */
/*
 * common/fragmentation.h - the fragmentation attribution, written once
 * for the allocator's in-process profile (allocator/api/
 * fragmentation_api.c) and the collector's (collector's fragmentation.c).
 * Pure functions: no allocation, no lock, no clock.
 *
 * A small sample holds a proxy object in a normal span S of B_S bytes,
 * of which n_S objects (the proxy included) are out; the objects are of
 * size a (the size class).  S cannot go back to the OS while n_S > 0;
 * its unused bytes are F_S = B_S - n_S * a.  Two attributions per sample
 * of estimated count c = W / (r + 1) and age t (docs/profiles.md):
 *
 *   proxy (the seed's method):  frag = c * F_S / n_S
 *       every live object of S carries an equal share of F_S;
 *   age-weighted:  frag_age = frag * t / t_class
 *       t_class = sum frag_j t_j / sum frag_j over the live samples of
 *       the same size class: objects that outlive their neighbours and
 *       keep a span alive carry more than young ones that come and go,
 *       and the class total equals the proxy method's (bytes move to
 *       older objects, none are made).
 *
 * Both passes use hs_frag_bytes(), so the class totals of the two
 * methods agree to rounding.
 */
#ifndef HS_COMMON_FRAGMENTATION_H
#define HS_COMMON_FRAGMENTATION_H

#include <stdbool.h>
#include <stdint.h>

/* Per size class: the sums behind t_class. */
struct hs_frag_class {
	double cw;  /* sum of frag over the class's samples, bytes */
	double ctw; /* sum of frag * age, bytes * ns */
};

/*
 * Can a sample of allocated size a (bytes) whose proxy's span has
 * span_bytes, span_live objects out and span_objects in all be
 * attributed?  False for data no live span can have (no object out,
 * more out than it holds, more bytes out than the span): a sample left
 * out, never a division by zero or a negative share.
 */
bool hs_frag_usable(uint64_t a, uint64_t span_bytes, uint64_t span_live,
		    uint64_t span_objects);

/* The sample's age in ns at now (both CLOCK_MONOTONIC ns); 0 when its
 * time is unknown (0) or not before now. */
uint64_t hs_frag_age(uint64_t now, uint64_t time_ns);

/* The proxy method's bytes for a usable sample: count * F_S / n_S, where
 * count = W / (r + 1) (the objects the sample stands for). */
double hs_frag_bytes(double count, uint64_t a, uint64_t span_bytes,
		     uint64_t span_live);

/* Pass 1: add a sample's proxy-method bytes and age to its class. */
void hs_frag_class_add(struct hs_frag_class *k, double frag, uint64_t age);

/* Pass 2: the age-weighted bytes of a sample of its class k (0 when the
 * class has no weighted age). */
double hs_frag_age_bytes(const struct hs_frag_class *k, double frag,
			 uint64_t age);

#endif /* HS_COMMON_FRAGMENTATION_H */
