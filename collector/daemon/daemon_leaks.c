// SPDX-License-Identifier: MIT
/*
 * daemon_leaks.c - the daemon's leak-trend points: the main loop calls
 * hs_daemon__leak_points after each ring-buffer batch, and every followed
 * process whose --leak-interval has passed gets a point in its store
 * (profiles/leaks.c), made at its first point.  A point is one pass over
 * the process's live set under the daemon lock, so the points of one
 * call stop after LEAK_BUDGET_NS and the next call goes on from there:
 * the lock is never held long for them, and a point that has to wait is
 * at most a few loop turns (200 ms each) late.
 */
#include "clock.h"
#include "daemon.h"

#define LEAK_BUDGET_NS (10 * HS_NS_PER_MS)

void hs_daemon__leak_points(struct hs_daemon *d)
{
	uint64_t start = hs_mono_ns();

	if (!d->leak_interval_ns)
		return;
	for (size_t k = 0; k < HS_DAEMON_BUCKETS; k++) {
		size_t b = (d->leak_cursor + k) % HS_DAEMON_BUCKETS;

		for (struct hs_proc *p = d->buckets[b]; p; p = p->next) {
			int64_t period =
				p->ev.period > 0 ? p->ev.period : p->reg_period;

			if (p->gone)
				continue;
			if (!p->leaks) {
				p->leaks = hs_leaks__new(d->leak_interval_ns);
				if (!p->leaks)
					continue;
			}
			/* -ENOMEM: no point this time; the next may fit */
			hs_leaks__tick(p->leaks, p->ev.prof, period,
				       hs_mono_ns());
		}
		if (hs_mono_ns() - start >= LEAK_BUDGET_NS) {
			d->leak_cursor = (b + 1) % HS_DAEMON_BUCKETS;
			return;
		}
	}
}
