// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/sampler.c - the sampling maths only: PRNG, interval draws,
 * weights, the global sampling period.  See sampler.h for the model.
 * No allocation, no locks; the only system call is getrandom(2) when a
 * thread seeds its PRNG without HEAPSCOPE_SAMPLE_SEED.
 */
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/options.h"
#include "base/os.h"
#include "sampling/sampler.h"

#define PRNG_BITS 48
#define PRNG_MASK (((uint64_t)1 << PRNG_BITS) - 1)
#define Q_BITS 26
/* s->rng holds the 48-bit LCG state with this bit set, so that 0 can mean
 * "not seeded yet" (the LCG state itself may legitimately be 0). */
#define RNG_SEEDED ((uint64_t)1 << 63)

#define PERIOD_UNSET INT64_MIN

static int64_t g_period = PERIOD_UNSET; /* T, atomic */
static int g_period_explicit;           /* set through the API, atomic */
static uint64_t g_epoch = 1;            /* bumped on every change, atomic */
static uint64_t g_seeded;               /* thread index counter, atomic */

int64_t hs_sampler_period(void)
{
	int64_t t = __atomic_load_n(&g_period, __ATOMIC_ACQUIRE);

	if (HS_UNLIKELY(t == PERIOD_UNSET)) {
		int64_t want = hs_option_get(HS_OPT_SAMPLE_RATE);

		/* Only the first loader wins; a concurrent set_period stays. */
		__atomic_compare_exchange_n(&g_period, &t, want, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		t = __atomic_load_n(&g_period, __ATOMIC_ACQUIRE);
	}
	return t;
}

int64_t hs_sampler_set_period(int64_t period)
{
	int64_t old;

	(void)hs_sampler_period(); /* no later lazy load may overwrite us */
	__atomic_store_n(&g_period_explicit, 1, __ATOMIC_RELAXED);
	old = __atomic_exchange_n(&g_period, period, __ATOMIC_ACQ_REL);
	__atomic_fetch_add(&g_epoch, 1, __ATOMIC_RELEASE);
	return old;
}

void hs_sampler_global_init(void)
{
	if (__atomic_load_n(&g_period_explicit, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&g_period, hs_option_get(HS_OPT_SAMPLE_RATE),
			 __ATOMIC_RELEASE);
	__atomic_fetch_add(&g_epoch, 1, __ATOMIC_RELEASE);
}

uint64_t hs_sampler_next_random(uint64_t x)
{
	const uint64_t a = 0x5DEECE66DULL, c = 0xB;

	return (a * x + c) & PRNG_MASK;
}

#define LN2 0.693147180559945309417232121458176568
/* ln 2 split as fdlibm's e_log.c does: LN2_HI has its low 32 bits zero,
 * so e * LN2_HI is exact for |e| < 2^20. */
#define LN2_HI 6.93147180369123816490e-01
#define LN2_LO 1.90821492927058770002e-10

/* ln(1 + f) for |f| <= 1/2, fdlibm's arrangement of the series
 *   ln(1 + f) = 2 atanh(s) = 2s + 2s^3/3 + 2s^5/5 + ...,  s = f / (2 + f):
 * ln(1 + f) = f - (f^2/2 - s (f^2/2 + R)),  R = sum_k 2 s^2k / (2k + 1),
 * with the exact Taylor coefficients summed until they no longer change
 * R (|s| <= 1/3: at most ~17 terms; ~9 for ln's |s| <= 0.172).  The
 * correction to f is small, so the result is within about one ulp.
 * e_lo is added inside the correction (e ln 2's low part). */
static double ln1p_core(double f, double e_lo)
{
	double s = f / (2.0 + f), s2 = s * s, hfsq = 0.5 * f * f;
	double p = s2, r = 0;
	for (unsigned k = 3; k < 99; k += 2) {
		double next = r + 2.0 * p / k;
		if (next == r)
			break;
		r = next;
		p *= s2;
	}
	return f - ((hfsq - (s * (hfsq + r) + e_lo)));
}

double hs_sampler_ln(double x)
{
	uint64_t bits;
	memcpy(&bits, &x, sizeof(bits));
	int e = (int)((bits >> 52) & 0x7ff) - 1023;
	/* mantissa m in [1, 2), then into [sqrt(1/2), sqrt(2)) */
	bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
	double m;
	memcpy(&m, &bits, sizeof(m));
	if (m > 1.41421356237309504880) {
		m *= 0.5;
		e++;
	}
	/* m - 1 is exact (Sterbenz) */
	return e * LN2_HI + ln1p_core(m - 1.0, e * LN2_LO);
}

double hs_sampler_ln1p(double y)
{
	return ln1p_core(y, 0.0);
}

/*
 * Inverse-CDF draw of the geometric interval I (mean T, P(I > n) =
 * (1 - 1/T)^n):  with U uniform in (0, 1],
 *
 *     I - 1 = floor(ln U / ln(1 - 1/T))
 *           = floor((ln q - 26 ln 2) / ln1p(-1/T))
 *
 * where q = (top 26 bits of the LCG) + 1, uniform in [1, 2^26], and
 * U = q / 2^26.  TCMalloc's (log2 q - 26) * (-ln 2 * T) is the continuous
 * approximation of the same law (-1/ln(1 - 1/T) = T - 1/2 - O(1/T)); the
 * exact form makes the mean exactly T for every T and T = 1 exact.
 * The largest interval (q = 1) is about 18 T; the result is saturated at
 * HS_SAMPLER_MAX_COUNTER so a huge T cannot overflow.
 */
size_t hs_sampler_draw(uint64_t *rng, int64_t period)
{
	uint64_t x;
	double q, c;

	if (period <= 0)
		return HS_SAMPLER_OFF_COUNTER;
	if (period == 1)
		return 0; /* every byte is a sampling point */
	x = hs_sampler_next_random(*rng & PRNG_MASK);
	*rng = x | RNG_SEEDED;
	q = (double)(uint32_t)(x >> (PRNG_BITS - Q_BITS)) + 1.0;
	c = (hs_sampler_ln(q) - Q_BITS * LN2) /
	    hs_sampler_ln1p(-1.0 / (double)period);
	/* ">=": (double)HS_SAMPLER_MAX_COUNTER is exact, but be safe */
	if (!(c < (double)HS_SAMPLER_MAX_COUNTER))
		return HS_SAMPLER_MAX_COUNTER;
	if (c < 0) /* -0.0 when q = 2^26 */
		return 0;
	return (size_t)c;
}

/* splitmix64 finaliser: spreads seed and index over all 48 bits. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

uint64_t hs_sampler_initial_state(uint64_t seed, uint64_t index)
{
	return mix64(seed + 0x9E3779B97F4A7C15ULL * (index + 1)) & PRNG_MASK;
}

uint64_t hs_sampler_seeded_count(void)
{
	return __atomic_load_n(&g_seeded, __ATOMIC_RELAXED);
}

/*
 * Seeds.  HEAPSCOPE_SAMPLE_SEED != 0: deterministic, the seed mixed with
 * the thread's index in the order threads first reach the slow path (so a
 * single-threaded program, or threads started in a fixed order, replays
 * the same samples).  Otherwise 8 bytes of getrandom(2) (GRND_NONBLOCK,
 * no malloc), falling back on rdtsc ^ tid ^ the sampler's address.
 */
static void seed(hs_sampler_t *s)
{
	uint64_t index = __atomic_fetch_add(&g_seeded, 1, __ATOMIC_RELAXED);
	uint64_t seedv = (uint64_t)hs_option_get(HS_OPT_SAMPLE_SEED);
	uint64_t v = 0;

	if (seedv == 0) {
		long n = syscall(SYS_getrandom, &v, sizeof(v), 1 /* NONBLOCK */);

		if (n != (long)sizeof(v)) {
			uint32_t lo, hi;

			__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
			v = ((uint64_t)hi << 32 | lo) ^
			    ((uint64_t)hs_gettid() << 40) ^ (uintptr_t)s;
		}
		seedv = v | 1;
	}
	s->rng = hs_sampler_initial_state(seedv, index) | RNG_SEEDED;
}

size_t hs_sampler_record_slow(hs_sampler_t *s, size_t requested)
{
	uint64_t epoch = __atomic_load_n(&g_epoch, __ATOMIC_ACQUIRE);
	size_t k = requested + 1;

	if (HS_UNLIKELY(k == 0)) {
		/* r = SIZE_MAX cannot be allocated anyway; the next
		 * allocation comes back here and is handled normally. */
		s->bytes_until_sample = 0;
		return 0;
	}
	if (HS_UNLIKELY(s->rng == 0 || s->epoch != epoch)) {
		size_t c;

		/* First use or new period: draw a fresh counter and apply
		 * this request to it, as if it had been there all along. */
		if (s->rng == 0)
			seed(s);
		s->epoch = epoch;
		s->period = hs_sampler_period();
		c = hs_sampler_draw(&s->rng, s->period);
		if (!__builtin_usubl_overflow(c, k, &s->bytes_until_sample))
			return 0;
	}
	/* s->bytes_until_sample = c - k, wrapped. */
	if (s->period <= 0) {
		s->bytes_until_sample = HS_SAMPLER_OFF_COUNTER;
		return 0;
	}
	{
		/* W = T + k - f with f = c + 1 */
		size_t w = (size_t)s->period - s->bytes_until_sample - 1;

		s->bytes_until_sample = hs_sampler_draw(&s->rng, s->period);
		return w;
	}
}
