// SPDX-License-Identifier: MIT
/*
 * http_leaks.c - the daemon's leak-trend endpoint:
 *
 *   /debug/heapscope/leaks?pid=N|comm=NAME
 *
 * JSON (export/export_leaks.c): per stack of the process, the growth of
 * its estimated in-use bytes over the points its store holds (one every
 * --leak-interval, daemon_leaks.c), the bytes in use now and the age of
 * its oldest live sample, most suspect first.  The store and the live
 * set's ages are copied under the daemon lock; symbolizing and the fits
 * happen outside it, under the process's symbol lock.  Access as the
 * other per-process endpoints (http_access.c): a unix peer that is not
 * root reads only its own processes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clock.h"
#include "http.h"

static const char usage[] = "usage: /debug/heapscope/leaks?pid=N|comm=NAME";

static enum MHD_Result leaks_error(struct hs_daemon *d,
				   struct MHD_Connection *c, int err, long pid)
{
	char msg[200];
	unsigned status = MHD_HTTP_INTERNAL_SERVER_ERROR;

	if (err == -ESRCH) {
		snprintf(msg, sizeof(msg), "no process %ld", pid);
		status = MHD_HTTP_NOT_FOUND;
	} else if (err == -EACCES) {
		snprintf(msg, sizeof(msg),
			 "process %ld is not yours to read (it belongs to "
			 "another user, or is set-uid or not dumpable)",
			 pid);
		status = MHD_HTTP_FORBIDDEN;
	} else if (err == -ENOENT) {
		snprintf(msg, sizeof(msg),
			 "process %ld does not use the heapscope library "
			 "given to the daemon (--lib)",
			 pid);
		status = MHD_HTTP_NOT_FOUND;
	} else {
		snprintf(msg, sizeof(msg),
			 "cannot read the leak trends of "
			 "process %ld: %s",
			 pid, strerror(-err));
	}
	return hs_http__reply_error(d, c, status, msg);
}

/* Under d->lock: copy pid's series and take a reference to its symbols
 * (in snap->sym, released with hs_daemon__release). */
static int copy_series(struct hs_daemon *d, long pid, uint64_t start,
		       struct hs_leak_series **ss, size_t *n, double *window_s,
		       int64_t *period, struct hs_snapshot *snap)
{
	struct hs_proc *p;
	int err;

	hs_daemon__drain(d);
	err = hs_daemon__get(d, (pid_t)pid, &p);
	if (!err && start && p->start_time != start)
		err = -ESRCH; /* the pid was reused since */
	if (err)
		return err;
	*ss = NULL;
	*n = 0;
	*window_s = 0;
	*period = p->ev.period > 0 ? p->ev.period : p->reg_period;
	if (p->leaks) {
		err = hs_leaks__copy(p->leaks, p->ev.prof, hs_mono_ns(), ss, n);
		if (err)
			return err;
		*window_s = hs_leaks__window_s(p->leaks);
	}
	snap->sym = p->sym;
	if (snap->sym)
		snap->sym->refs++;
	return 0;
}

/* Without d->lock: name the series' frames and rank them. */
static int report(struct hs_snapshot *snap, const struct hs_leak_series *ss,
		  size_t n, struct hs_leak_row **rows, size_t *nrows)
{
	struct hs_syms *syms;
	int err;

	if (!snap->sym || !snap->sym->syms)
		return hs_leaks__report(ss, n, NULL, NULL, rows, nrows);
	pthread_mutex_lock(&snap->sym->lock);
	syms = snap->sym->syms;
	/* stacks in a library loaded since the last maps refresh */
	for (size_t i = 0; i < n; i++)
		hs_syms__check(syms, ss[i].stack, ss[i].depth);
	hs_syms__sync(syms);
	err = hs_leaks__report(ss, n, hs_syms__name, syms, rows, nrows);
	pthread_mutex_unlock(&snap->sym->lock);
	return err;
}

enum MHD_Result hs_http__leaks(struct hs_daemon *d, struct MHD_Connection *c,
			       const struct hs_http_peer *who)
{
	struct hs_snapshot snap = {0};
	struct hs_leak_series *ss = NULL;
	struct hs_leak_row *rows = NULL;
	size_t n = 0, nrows = 0, len = 0;
	double window_s = 0;
	int64_t period = 0;
	char *text = NULL;
	uint64_t start;
	FILE *f;
	long pid = 0;
	int err;

	err = hs_http__target_pid(d, c, who, &pid);
	if (err)
		return hs_http__target_error(d, c, err, usage);
	if (!d->leak_interval_ns)
		return hs_http__reply_error(d, c, MHD_HTTP_CONFLICT,
					    "leak trends are off (the daemon "
					    "runs with --leak-interval 0)");
	/* before following it: nothing of another user's process is read */
	err = hs_http__may_read(who, (pid_t)pid, &start);
	if (err)
		return leaks_error(d, c, err, pid);
	pthread_mutex_lock(&d->lock);
	err = copy_series(d, pid, start, &ss, &n, &window_s, &period, &snap);
	pthread_mutex_unlock(&d->lock);
	if (!err)
		err = report(&snap, ss, n, &rows, &nrows);
	pthread_mutex_lock(&d->lock);
	hs_daemon__release(d, &snap);
	pthread_mutex_unlock(&d->lock);
	hs_leak_series__free(ss, n);
	if (err)
		return leaks_error(d, c, err, pid);
	f = open_memstream(&text, &len);
	if (!f) {
		hs_leak_rows__free(rows, nrows);
		return hs_http__reply_error(
			d, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	hs_leaks__write_json(f, (pid_t)pid, window_s,
			     (double)d->leak_interval_ns / 1e9, period, rows,
			     nrows);
	hs_leak_rows__free(rows, nrows);
	return hs_http__reply_stream(d, c, f, &text, &len, "application/json");
}
