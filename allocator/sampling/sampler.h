/* SPDX-License-Identifier: MIT */
/*
 * allocator/sampling/sampler.h - the sampling maths (private to the sampling side).
 *
 * Model.  The bytes a thread allocates form one stream; an allocation of
 * requested size r occupies k = r + 1 bytes of it (the +1 lets 0-byte
 * requests be sampled).  Every byte of the stream is a "sampling point"
 * independently with probability p = 1/T (T = sampling period, bytes).
 * An allocation is sampled when it contains at least one sampling point:
 *
 *     P(sampled) = 1 - (1 - 1/T)^k  ~=  1 - e^(-k/T)
 *
 * The distance I from one point to the next is geometric on {1, 2, ...}
 * with mean exactly T:  P(I > n) = (1 - 1/T)^n.  Each thread keeps a
 * counter c = f - 1, where f = bytes left up to and including the next
 * point (interval offset 1, as in TCMalloc, so "the allocation contains
 * the point" is "c - k underflows", one subtraction on the fast path).
 *
 * Weight.  For a sampled allocation the first point is at offset f (1 <= f
 * <= k) inside it; the remaining k - f bytes hold Binomial(k - f, 1/T)
 * further points.  T * (number of points) is an unbiased estimate of k;
 * replacing the unseen points by their expectation (Rao-Blackwell) gives
 *
 *     W = T + k - f = T - (ssize_t)(c - k) - 1        (c - k wrapped)
 *
 * still unbiased and with less variance.  E[sum W] = sum k for any
 * allocation pattern (the stream is memoryless, so no pattern can bias it);
 * Var(sum W) lies between T^2 - T (one huge allocation: Var f) and
 * about T * M (M bytes of tiny allocations).  T = 1 makes every byte a
 * point: c is always 0, every allocation is sampled, W = k = r + 1.
 *
 * After a sample the next interval is drawn fresh from the end of the
 * allocation (exact because the process is memoryless).
 */
#ifndef HS_SAMPLER_H
#define HS_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "heapscope/heapscope.h"
#include "sampling.h"

/* Counter used while sampling is off (T <= 0): the slow path is still
 * reached every 128 MiB so a run-time rate change is picked up. */
#define HS_SAMPLER_OFF_COUNTER ((size_t)128 << 20)
/* Saturation of a drawn counter (an interval this large never ends). */
#define HS_SAMPLER_MAX_COUNTER ((size_t)1 << 62)

/* The largest period the API accepts draws counters far below the
 * saturation (about 18 T at most), so a weight T + k - f never wraps. */
_Static_assert(HEAPSCOPE_MAX_SAMPLE_PERIOD < (int64_t)(HS_SAMPLER_MAX_COUNTER / 32),
	       "HEAPSCOPE_MAX_SAMPLE_PERIOD too close to the counter saturation");

/* Global sampling period T in bytes (<= 0: off).  Loaded lazily from
 * HEAPSCOPE_SAMPLE_RATE.  Thread-safe (atomic). */
int64_t hs_sampler_period(void);

/* Set the global period; every thread re-draws its counter at its next
 * slow path (epoch bump).  Returns the previous period.  Thread-safe. */
int64_t hs_sampler_set_period(int64_t period);

/* (Re)load the period from the options unless it was set explicitly. */
void hs_sampler_global_init(void);

/* One step of the 48-bit LCG (the one of TCMalloc / drand48):
 * x' = (0x5DEECE66D * x + 0xB) mod 2^48. */
uint64_t hs_sampler_next_random(uint64_t x);

/* Draw a counter c = I - 1 for period T from the PRNG state *rng
 * (advanced).  T <= 0: HS_SAMPLER_OFF_COUNTER; T == 1: 0. */
size_t hs_sampler_draw(uint64_t *rng, int64_t period);

/* Natural logarithm of x (finite, > 0; normal numbers only) and ln(1 + y)
 * for -1/2 <= y <= 1/2, to about one ulp, by the atanh series: the
 * sampler's own, so the library does not load libm (~0.5 MiB of RSS in
 * a small program).  Pure functions. */
double hs_sampler_ln(double x);
double hs_sampler_ln1p(double y);

/* Initial PRNG state for deterministic seed `seed` (!= 0) and thread index
 * `index` (0, 1, 2, ... in the order threads first reach the slow path). */
uint64_t hs_sampler_initial_state(uint64_t seed, uint64_t index);

/* Number of samplers seeded so far (= next thread index). */
uint64_t hs_sampler_seeded_count(void);

/*
 * The estimate a sample stands for: x * W / (r + 1) rounded down, for x
 * = a (allocated bytes), r (requested bytes) or a - r (internal
 * fragmentation), without overflow (DESIGN.md section 1).  Pure.
 */
static inline uint64_t hs_sampler_estimate(uint64_t w, uint64_t x, uint64_t r)
{
	return (uint64_t)((unsigned __int128)w * x / ((unsigned __int128)r + 1));
}

/*
 * The maths of the slow path, called after hs_sampler_try_fast() returned
 * false for `requested` bytes.  On first use (s->rng == 0) it seeds the
 * PRNG, draws a counter and applies this request to it (TCMalloc's
 * RecordAllocationSlow initialisation); when the global period changed
 * (epoch) it re-draws the same way.  Returns the weight W (> 0, bytes in
 * units of requested + 1) when this allocation is sampled, 0 otherwise.
 * Touches only *s and atomics: thread-safe for a thread's own sampler.
 */
size_t hs_sampler_record_slow(hs_sampler_t *s, size_t requested);

#endif /* HS_SAMPLER_H */
