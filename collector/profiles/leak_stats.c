// SPDX-License-Identifier: MIT
/*
 * leak_stats.c - the statistics of the leak-trend view: the sampling
 * variance of one sample's estimate, the least-squares growth of a
 * series of in-use estimates with its standard error, and the score and
 * the "growing" verdict that rank sites (docs/profiles.md, "Leak
 * trends", derives them).  Pure arithmetic: no state, thread-safe.
 */
#include <math.h>

#include "profiles.h"

double hs_leak__sample_var(const struct hs_sample *s, int64_t period)
{
	double k, per, p, wk;

	if (s->flags & HS_SAMPLE_COMPAT || period <= 0) {
		/* No period known: x stands for x / a blocks of a bytes,
		 * the inclusion probability a / x; w (w - s) as below. */
		double x = hs_sample_estimate(s, HS_VALUE_INUSE);
		double a = (double)s->allocated;

		return x > a ? x * (x - a) : 0.0;
	}
	/* Geometric sampler with period P: a block of k = r + 1 units is
	 * sampled with p = 1 - exp(-k/P), weight w = k/p.  Horvitz-Thompson:
	 * the variance of the estimate, estimated from the samples, is
	 * w (w - k) per sample, in units^2; a unit is a/(r+1) bytes. */
	k = (double)s->requested + 1.0;
	per = (double)s->allocated / k;
	p = -expm1(-k / (double)period);
	if (p <= 0)
		return 0.0;
	wk = k / p;
	/* w - k = k (1 - p) / p, without the cancellation */
	return per * per * wk * (k * exp(-k / (double)period) / p);
}

int hs_leak__fit(const double *t, const double *y, const double *var, size_t n,
		 struct hs_leak_fit *f)
{
	double tb = 0, yb = 0, sxx = 0, sxy = 0, ses = 0, rss = 0, a;

	*f = (struct hs_leak_fit){.points = n};
	if (!n)
		return 0;
	f->span_s = t[n - 1] - t[0];
	for (size_t i = 0; i < n; i++) {
		tb += t[i];
		yb += y[i];
	}
	tb /= (double)n;
	yb /= (double)n;
	for (size_t i = 0; i < n; i++) {
		sxx += (t[i] - tb) * (t[i] - tb);
		sxy += (t[i] - tb) * (y[i] - yb);
	}
	if (n < 2 || sxx <= 0)
		return 0;
	f->slope = sxy / sxx;
	a = yb - f->slope * tb;
	for (size_t i = 0; i < n; i++) {
		double c = (t[i] - tb) / sxx, r = y[i] - a - f->slope * t[i];

		/* the slope is sum c_i y_i: its variance from the points'
		 * sampling variances, the points taken as independent */
		ses += c * c * (var[i] > 0 ? var[i] : 0);
		rss += r * r;
	}
	f->se_sampling = sqrt(ses);
	if (n >= 3)
		f->se_residual = sqrt(rss / (double)(n - 2) / sxx);
	f->se = sqrt(ses + f->se_residual * f->se_residual);
	if (f->se > 0)
		f->t = f->slope / f->se;
	else
		f->t = f->slope > 0   ? HS_LEAK_T_CAP
		       : f->slope < 0 ? -HS_LEAK_T_CAP
				      : 0;
	if (f->t > HS_LEAK_T_CAP)
		f->t = HS_LEAK_T_CAP;
	if (f->t < -HS_LEAK_T_CAP)
		f->t = -HS_LEAK_T_CAP;
	return 0;
}

/* How much of the observed span the oldest live object covers, 0..1. */
static double age_factor(const struct hs_leak_fit *f, double oldest_age_s)
{
	if (f->span_s <= 0 || oldest_age_s <= 0)
		return 0;
	return oldest_age_s >= f->span_s ? 1.0 : oldest_age_s / f->span_s;
}

double hs_leak__score(const struct hs_leak_fit *f, double oldest_age_s)
{
	if (f->points < HS_LEAK_FIT_MIN_POINTS || f->t <= 0)
		return 0;
	return f->t * age_factor(f, oldest_age_s);
}

bool hs_leak__growing(const struct hs_leak_fit *f, double oldest_age_s)
{
	return f->points >= HS_LEAK_FIT_MIN_POINTS && f->slope > 0 &&
	       f->t >= HS_LEAK_T_MIN &&
	       age_factor(f, oldest_age_s) >= HS_LEAK_AGE_MIN;
}
