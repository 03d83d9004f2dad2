// SPDX-License-Identifier: MIT
/*
 * oom_pick.c - which followed process a PSI wake-up snapshots
 * (pressure.c gathers the candidates; this is the rule alone, pure, so
 * tests/test_oom_pick.c can check it without cgroups or pressure).
 */
#include "oom.h"

long hs_oom__psi_pick(const struct hs_oom_cand *c, size_t n)
{
	double best_ratio = HS_OOM_PSI_NEAR_LIMIT, best_inuse = -1;
	long near = -1, top = -1;

	for (size_t i = 0; i < n; i++) {
		if (!c[i].cooled)
			continue;
		/* >=: of equal ratios, the later one (the order is the
		 * daemon's table's, arbitrary) */
		if (c[i].limit &&
		    (double)c[i].usage >= best_ratio * (double)c[i].limit) {
			near = (long)i;
			best_ratio = (double)c[i].usage / (double)c[i].limit;
		}
		if (c[i].inuse > best_inuse) {
			top = (long)i;
			best_inuse = c[i].inuse;
		}
	}
	if (near >= 0)
		return c[near].captured ? -1 : near;
	if (top >= 0)
		return c[top].captured ? -1 : top;
	return -1;
}
