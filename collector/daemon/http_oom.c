// SPDX-License-Identifier: MIT
/*
 * http_oom.c - the pre-OOM snapshots over HTTP:
 *
 *   /debug/heapscope/oom[?pid=N]      JSON: the snapshots kept, newest
 *                                     first, with the store's counters
 *   /debug/heapscope/oom/ID.pb.gz     one snapshot's profile, gzip'd pprof
 *
 * Who may read a snapshot: a peer that reads every process (root over a
 * unix socket, TCP with the token), or the uid that owned the process
 * when it was captured, by hs_http__may_read's rule (the process may be
 * dead by now, so it is decided at capture, oom_store.c).  A snapshot
 * another uid may not read is left out of the list and answers 404, as
 * one that was never kept: ids tell nothing about other users.
 * Errors: malformed ?pid= or ID -> 400, unknown -> 404.  The store's
 * counters in /metrics: hs_http__oom_metrics.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http.h"

#define OOM_PATH "/debug/heapscope/oom"

static bool may_see(const struct hs_http_peer *who, const struct hs_oom_snap *s)
{
	return who->all || (s->owner_known && s->owner == who->uid);
}

/* A decimal in 1..max (no sign, no leading junk); -EINVAL otherwise. */
static int parse_id(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!n || n > 19)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (!v || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "2026-12-01T13:04:05.123456789Z" of a CLOCK_REALTIME ns. */
static void rfc3339(FILE *f, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	char buf[40];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "\"%s.%09" PRIu64 "Z\"", buf, ns % 1000000000u);
}

static void snap_json(FILE *f, const struct hs_oom_snap *s)
{
	fprintf(f, "{\"id\": %" PRIu64 ", \"pid\": %d, \"comm\": ", s->id,
		s->pid);
	hs_json__str(f, s->comm);
	fputs(", \"time\": ", f);
	rfc3339(f, s->time_ns);
	fprintf(f,
		", \"time_unix_nano\": %" PRIu64 ", \"reason\": ", s->time_ns);
	hs_json__str(f, hs_oom_reason_name(s->reason));
	fprintf(f,
		", \"victim\": %s, \"cgroup\": ", s->victim ? "true" : "false");
	hs_json__str(f, s->cg.version ? s->cg.path : "");
	fprintf(f,
		", \"cgroup_version\": %d, \"usage_bytes\": %" PRIu64
		", \"limit_bytes\": %" PRIu64 ", \"heap_inuse_bytes\": %.0f"
		", \"residency\": %s, \"capture_ms\": %.3f, \"profile\": "
		"\"" OOM_PATH "/%" PRIu64 ".pb.gz\", \"profile_bytes\": %zu, "
		"\"file\": ",
		s->cg.version, s->usage, s->limit, s->heap_bytes,
		s->residency ? "true" : "false", (double)s->capture_ns / 1e6,
		s->id, s->len);
	if (s->file[0])
		hs_json__str(f, s->file);
	else
		fputs("null", f);
	fprintf(f, ", \"rss\": %s}", s->rss_json ? s->rss_json : "null");
}

static enum MHD_Result list(struct hs_daemon *d, struct MHD_Connection *c,
			    const struct hs_http_peer *who)
{
	const char *spid =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
	struct hs_oom *o = &d->oom;
	uint64_t pid = 0;
	char *text = NULL;
	size_t len = 0;
	bool first = true;
	FILE *f;

	if (spid && parse_id(spid, strlen(spid), INT32_MAX, &pid))
		return hs_http__reply_error(d, c, MHD_HTTP_BAD_REQUEST,
					    "usage: " OOM_PATH "[?pid=N]");
	f = open_memstream(&text, &len);
	if (!f)
		return hs_http__reply_error(
			d, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	pthread_mutex_lock(&o->lock);
	fprintf(f,
		"{\"watching\": %s, \"threshold\": %g, \"cooldown_seconds\": "
		"%" PRIu64 ", \"keep\": %zu, \"taken\": %" PRIu64
		", \"evicted\": %" PRIu64 ", \"oom_kills\": %" PRIu64
		", \"capture_errors\": %" PRIu64 ", \"dump_errors\": %" PRIu64
		", \"snapshots\": [",
		o->running ? "true" : "false", o->threshold,
		o->cooldown_ns / 1000000000u, o->keep, o->taken, o->evicted,
		o->kills, o->capture_errors, o->dump_errors);
	for (const struct hs_oom_snap *s = o->snaps; s; s = s->next) {
		if (!may_see(who, s) || (pid && (uint64_t)s->pid != pid))
			continue;
		fputs(first ? "\n  " : ",\n  ", f);
		first = false;
		snap_json(f, s);
	}
	pthread_mutex_unlock(&o->lock);
	fputs(first ? "]}\n" : "\n]}\n", f);
	return hs_http__reply_stream(d, c, f, &text, &len, "application/json");
}

static enum MHD_Result profile(struct hs_daemon *d, struct MHD_Connection *c,
			       const struct hs_http_peer *who, const char *rest)
{
	static const char suffix[] = ".pb.gz";
	size_t n = strlen(rest), sl = sizeof(suffix) - 1;
	struct hs_oom *o = &d->oom;
	uint8_t *buf = NULL;
	size_t len = 0;
	uint64_t id;
	bool found = false;

	if (n <= sl || strcmp(rest + n - sl, suffix) ||
	    parse_id(rest, n - sl, UINT64_MAX / 10, &id))
		return hs_http__reply_error(d, c, MHD_HTTP_BAD_REQUEST,
					    "usage: " OOM_PATH "/ID.pb.gz (ID "
					    "from " OOM_PATH ")");
	pthread_mutex_lock(&o->lock);
	for (const struct hs_oom_snap *s = o->snaps; s; s = s->next)
		if (s->id == id && may_see(who, s)) {
			found = true;
			buf = malloc(s->len ? s->len : 1);
			if (buf) {
				memcpy(buf, s->pprof, s->len);
				len = s->len;
			}
			break;
		}
	pthread_mutex_unlock(&o->lock);
	if (found && !buf)
		return hs_http__reply_error(
			d, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	if (!found) {
		char msg[120];

		snprintf(msg, sizeof(msg),
			 "no OOM snapshot %" PRIu64 " (evicted, or never "
			 "taken; the list: " OOM_PATH ")",
			 id);
		return hs_http__reply_error(d, c, MHD_HTTP_NOT_FOUND, msg);
	}
	return hs_http__reply(c, MHD_HTTP_OK, "application/octet-stream", buf,
			      len, true);
}

enum MHD_Result hs_http__oom(struct hs_daemon *d, struct MHD_Connection *c,
			     const struct hs_http_peer *who, const char *url)
{
	const char *rest = url + strlen(OOM_PATH);

	if (!*rest || !strcmp(rest, "/"))
		return list(d, c, who);
	if (*rest != '/')
		return hs_http__reply_error(d, c, MHD_HTTP_NOT_FOUND,
					    "no such endpoint");
	return profile(d, c, who, rest + 1);
}

void hs_http__oom_metrics(FILE *f, struct hs_daemon *d)
{
	struct hs_oom *o = &d->oom;

	pthread_mutex_lock(&o->lock);
	fputs("# HELP heapscope_oom_snapshots_total Pre-OOM snapshots "
	      "taken, by reason.\n"
	      "# TYPE heapscope_oom_snapshots_total counter\n",
	      f);
	for (int r = HS_OOM_CGROUP_LIMIT; r <= HS_OOM_KILL; r++)
		fprintf(f,
			"heapscope_oom_snapshots_total{reason=\"%s\"} %" PRIu64
			"\n",
			hs_oom_reason_name(r), o->taken_by[r]);
	fprintf(f,
		"# HELP heapscope_oom_kills_total OOM kills of followed "
		"processes (oom/mark_victim).\n"
		"# TYPE heapscope_oom_kills_total counter\n"
		"heapscope_oom_kills_total %" PRIu64 "\n"
		"# HELP heapscope_oom_snapshots_kept Pre-OOM snapshots kept "
		"(at most --oom-keep).\n"
		"# TYPE heapscope_oom_snapshots_kept gauge\n"
		"heapscope_oom_snapshots_kept %zu\n"
		"# HELP heapscope_oom_errors_total Snapshots that could not "
		"be taken (capture) or written to --dump-dir (dump).\n"
		"# TYPE heapscope_oom_errors_total counter\n"
		"heapscope_oom_errors_total{kind=\"capture\"} %" PRIu64 "\n"
		"heapscope_oom_errors_total{kind=\"dump\"} %" PRIu64 "\n",
		o->kills, o->nsnaps, o->capture_errors, o->dump_errors);
	pthread_mutex_unlock(&o->lock);
}
