// SPDX-License-Identifier: MIT
/*
 * http_rss.c - where a followed process's RSS went, over HTTP:
 *
 *   /debug/heapscope/rss?pid=N|comm=NAME
 *       JSON (export/export_rss.c), the table profiles/rss.c reads
 *
 * and the same figures as per-process Prometheus families for /metrics
 * (http_metrics.c calls hs_http__rss_collect under the daemon lock and
 * hs_http__rss_metrics after it).  Access as every per-pid endpoint:
 * hs_http__may_read before anything of the process is read; the process
 * must use one of the daemon's --lib objects (it is followed from then
 * on, as /debug/pprof/heap does).  The target's memory and smaps are read
 * without the daemon lock, from a copy of its target.
 *
 * Errors: malformed query 400, another user's process 403, no such
 * process or not a heapscope process 404, a library without the
 * statistics block 404, a block that fails validation 502, other 500.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "http.h"

static enum MHD_Result rss_error(struct hs_daemon *d, struct MHD_Connection *c,
				 int err, long pid)
{
	char msg[200];
	unsigned status = MHD_HTTP_INTERNAL_SERVER_ERROR;

	switch (err) {
	case -ESRCH:
		snprintf(msg, sizeof(msg), "no process %ld", pid);
		status = MHD_HTTP_NOT_FOUND;
		break;
	case -EACCES:
		snprintf(msg, sizeof(msg),
			 "process %ld is not yours to read (it belongs to "
			 "another user, or is set-uid or not dumpable)",
			 pid);
		status = MHD_HTTP_FORBIDDEN;
		break;
	case -ENOENT:
		snprintf(msg, sizeof(msg),
			 "process %ld does not use the heapscope library "
			 "given to the daemon (--lib)",
			 pid);
		status = MHD_HTTP_NOT_FOUND;
		break;
	case -EPROTONOSUPPORT:
		snprintf(msg, sizeof(msg),
			 "the library of process %ld has no statistics block "
			 "(older than the daemon)",
			 pid);
		status = MHD_HTTP_NOT_FOUND;
		break;
	case -EBADMSG:
		snprintf(msg, sizeof(msg),
			 "the statistics block of process %ld is not valid",
			 pid);
		status = MHD_HTTP_BAD_GATEWAY;
		break;
	default:
		snprintf(msg, sizeof(msg), "cannot read process %ld: %s", pid,
			 strerror(-err));
	}
	return hs_http__reply_error(d, c, status, msg);
}

enum MHD_Result hs_http__rss(struct hs_daemon *d, struct MHD_Connection *c,
			     const struct hs_http_peer *who)
{
	struct hs_target *tg;
	struct hs_rss_table t;
	struct hs_proc *p;
	uint64_t start = 0, now = 0;
	char *text = NULL;
	size_t len = 0;
	long pid = 0;
	FILE *f;
	int err;

	err = hs_http__target_pid(d, c, who, &pid);
	if (err)
		return hs_http__target_error(
			d, c, err,
			"usage: /debug/heapscope/rss?pid=N|comm=NAME");
	/* before following it: nothing of another user's process is read */
	err = hs_http__may_read(who, (pid_t)pid, &start);
	if (err)
		return rss_error(d, c, err, pid);
	tg = malloc(sizeof(*tg));
	if (!tg)
		return rss_error(d, c, -ENOMEM, pid);
	pthread_mutex_lock(&d->lock);
	err = hs_daemon__get(d, (pid_t)pid, &p);
	if (!err && start && p->start_time != start)
		err = -ESRCH; /* the pid was reused since */
	if (!err) {
		*tg = p->t;
		start = p->start_time;
	}
	pthread_mutex_unlock(&d->lock);
	if (!err)
		err = hs_rss_table_read_target(tg, &t);
	free(tg);
	/* the same process still: not one that reused its pid meanwhile */
	if (!err && (hs_proc__start_time((pid_t)pid, &now) || now != start))
		err = -ESRCH;
	if (err)
		return rss_error(d, c, err, pid);
	f = open_memstream(&text, &len);
	if (!f)
		return rss_error(d, c, -ENOMEM, pid);
	hs_rss__write_json(f, &t);
	return hs_http__reply_stream(d, c, f, &text, &len, "application/json");
}

int hs_http__rss_collect(struct hs_daemon *d, const bool *mine, long only,
			 struct hs_rss_job **jobs, size_t *n)
{
	size_t i = 0, k = 0, cap = 0;

	*jobs = NULL;
	*n = 0;
	for (size_t b = 0; mine && b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next)
			if (mine[i++] && (!only || p->pid == only) &&
			    !p->gone && p->t.path[0])
				cap++;
	if (!cap)
		return 0;
	*jobs = calloc(cap, sizeof(**jobs));
	if (!*jobs)
		return -ENOMEM;
	i = 0;
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next)
			if (mine[i++] && (!only || p->pid == only) &&
			    !p->gone && p->t.path[0] && k < cap) {
				(*jobs)[k].t = p->t;
				memcpy((*jobs)[k].comm, p->info.comm,
				       sizeof((*jobs)[k].comm));
				(*jobs)[k].comm[sizeof((*jobs)[k].comm) - 1] =
					0;
				k++;
			}
	*n = k;
	return 0;
}

/* Prometheus label value: escape \, " and newline. */
static void label_value(char *out, size_t size, const char *s)
{
	size_t o = 0;

	for (; *s && o + 3 < size; s++) {
		if (*s == '\\' || *s == '"') {
			out[o++] = '\\';
			out[o++] = *s;
		} else if (*s == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else {
			out[o++] = *s;
		}
	}
	out[o] = 0;
}

void hs_http__rss_metrics(FILE *f, struct hs_rss_job *jobs, size_t n)
{
	for (size_t k = 0; k < n; k++)
		jobs[k].ok =
			!hs_rss_table_read_target(&jobs[k].t, &jobs[k].table);
	for (unsigned fam = 0; fam < HS_RSS_PROM_FAMILIES; fam++) {
		hs_rss__prom_help(f, fam);
		for (size_t k = 0; k < n; k++) {
			char comm[40], labels[80];

			if (!jobs[k].ok)
				continue;
			label_value(comm, sizeof(comm), jobs[k].comm);
			snprintf(labels, sizeof(labels),
				 "pid=\"%d\",comm=\"%s\"", (int)jobs[k].t.pid,
				 comm);
			hs_rss__prom_samples(f, fam, &jobs[k].table, labels);
		}
	}
}
