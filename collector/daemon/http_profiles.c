// SPDX-License-Identifier: MIT
/*
 * http_profiles.c - the daemon's profile endpoints:
 *
 *   /debug/pprof/heap[?pid=N|comm=NAME][&seconds=S][&debug=0|1][&format=...]
 *   /debug/pprof/allocs[?pid=N|comm=NAME][&seconds=S|&window=S][&debug=0|1]
 *                      [&format=pprof|folded|text]
 *   /debug/pprof/        an HTML index of the profiles and processes
 *
 * Without pid= or comm=, heap and allocs answer the host profile: every
 * followed process the requester may read, in one profile
 * (http_host.c); allocs?window= needs a process.
 *
 * As Go's net/http/pprof: heap and allocs are one profile with four
 * sample types (alloc_objects, alloc_space: allocations since the daemon
 * first followed the process; inuse_objects, inuse_space: live now),
 * inuse_space the default of heap and alloc_space that of allocs; both
 * answer at once.  ?seconds=S (1..300) blocks S seconds and answers the
 * difference of the profile over them (inuse may be negative);
 * ?debug=1 answers text (the top list) instead of pprof.  allocs'
 * ?window=S keeps the older form: only allocations sampled during the
 * next S seconds, pprof types alloc_objects/alloc_space.
 *
 * Errors: malformed query -> 400, another user's process (a unix-socket
 * peer that is not root) -> 403, unknown pid / not a heapscope process ->
 * 404, several processes with that comm -> 409, the process exits during
 * an allocs window -> 410, profile cannot be built (the process died
 * mid-read, out of memory) -> 500.  Handlers take the daemon lock only
 * while they read the shared state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "http.h"

#define MAX_WINDOW_S 300

/* A positive decimal integer of at most `max`; -EINVAL otherwise. */
static int parse_uint(const char *s, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s || strlen(s) > 10 || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_format(const char *s, enum hs_format *f)
{
	*f = HS_FORMAT_PPROF;
	return s ? hs_parse_format(s, f) : 0;
}

static const char *content_type(enum hs_format f)
{
	return f == HS_FORMAT_PPROF ? "application/octet-stream"
				    : "text/plain; charset=utf-8";
}

/* Without the daemon lock: symbolize and encode snap as fmt (*buf
 * malloc'd), then drop the snapshot's references under the lock. */
static int render(struct hs_daemon *d, struct hs_snapshot *snap,
		  enum hs_format fmt, uint8_t **buf, size_t *len)
{
	int err = hs_daemon__render(snap, fmt, buf, len);

	pthread_mutex_lock(&d->lock);
	hs_daemon__release(d, snap);
	pthread_mutex_unlock(&d->lock);
	return err;
}

static enum MHD_Result get_error(struct hs_daemon *d, struct MHD_Connection *c,
				 int err, long pid)
{
	char msg[200];

	if (err == -ESRCH) {
		snprintf(msg, sizeof(msg), "no process %ld", pid);
		return hs_http__reply_error(d, c, MHD_HTTP_NOT_FOUND, msg);
	}
	if (err == -EACCES) {
		snprintf(msg, sizeof(msg),
			 "process %ld is not yours to read (it belongs to "
			 "another user, or is set-uid or not dumpable)",
			 pid);
		return hs_http__reply_error(d, c, MHD_HTTP_FORBIDDEN, msg);
	}
	if (err == -ENOENT) {
		snprintf(msg, sizeof(msg),
			 "process %ld does not use the heapscope library "
			 "given to the daemon (--lib)",
			 pid);
		return hs_http__reply_error(d, c, MHD_HTTP_NOT_FOUND, msg);
	}
	snprintf(msg, sizeof(msg), "cannot profile process %ld: %s", pid,
		 strerror(-err));
	return hs_http__reply_error(d, c, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
}

/* Under d->lock: the followed process pid (started following now if
 * need be), when it is the one hs_http__may_read saw (start: its start
 * time, 0 = any). */
static int get_proc(struct hs_daemon *d, long pid, uint64_t start,
		    struct hs_proc **p)
{
	int err = hs_daemon__get(d, (pid_t)pid, p);

	if (!err && start && (*p)->start_time != start)
		err = -ESRCH; /* the pid was reused since */
	return err;
}

/* Does the request name no process (neither pid= nor comm=)? */
static bool no_process(struct MHD_Connection *c)
{
	return !MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid") &&
	       !MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "comm");
}

/* Go's ?debug=N: 0 pprof, 1 or 2 text; -EINVAL otherwise. */
static int parse_debug(const char *s, bool *text)
{
	*text = false;
	if (!s)
		return 0;
	if (strcmp(s, "0") && strcmp(s, "1") && strcmp(s, "2"))
		return -EINVAL;
	*text = strcmp(s, "0") != 0;
	return 0;
}

/* ?format=, else ?debug=: what to answer in; -EINVAL if malformed. */
static int parse_output(struct MHD_Connection *c, enum hs_format *fmt)
{
	const char *sf =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "format");
	bool text;

	if (parse_debug(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						    "debug"),
			&text) ||
	    parse_format(sf, fmt))
		return -EINVAL;
	if (!sf && text)
		*fmt = HS_FORMAT_TEXT;
	return 0;
}

/* Is pid still the process with that start time (not exited, not
 * exec'd)?  Under the daemon lock. */
static struct hs_proc *same_proc(struct hs_daemon *d, long pid,
				 uint64_t start_time)
{
	struct hs_proc *p = hs_daemon__find(d, (pid_t)pid);

	return p && !p->gone && p->info.start_time == start_time ? p : NULL;
}

/*
 * The answer to a profile request: the rendered profile buf (owned; len
 * bytes) when err is 0, else the error's status: -EPIPE (the process
 * exited or exec'd during the secs-second wait) 410, -ECANCELED (the
 * daemon is shutting down) 503, the rest as get_error.
 */
static enum MHD_Result reply_profile(struct hs_daemon *d,
				     struct MHD_Connection *c, int err,
				     long pid, long secs, enum hs_format fmt,
				     uint8_t *buf, size_t len)
{
	if (err == -EPIPE) {
		char msg[120];

		snprintf(msg, sizeof(msg),
			 "process %ld exited or called exec during the "
			 "%ld seconds",
			 pid, secs);
		return hs_http__reply_error(d, c, MHD_HTTP_GONE, msg);
	}
	if (err == -ECANCELED)
		return hs_http__reply_error(d, c, MHD_HTTP_SERVICE_UNAVAILABLE,
					    "daemon shutting down");
	if (err)
		return get_error(d, c, err, pid);
	return hs_http__reply(c, MHD_HTTP_OK, content_type(fmt), buf, len,
			      true);
}

/*
 * heap and allocs as Go's: one snapshot now, or (secs > 0) the
 * difference of two, secs apart.  allocs: alloc_space is the default
 * type, folded/text values; the profile starts when the process was
 * first followed (secs 0).
 */
static enum MHD_Result go_profile(struct hs_daemon *d, struct MHD_Connection *c,
				  long pid, uint64_t start, bool allocs,
				  long secs, enum hs_format fmt)
{
	struct hs_snapshot before, snap;
	struct hs_proc *p;
	uint64_t t0 = hs_wall_ns();
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	pthread_mutex_lock(&d->lock);
	hs_daemon__drain(d);
	err = get_proc(d, pid, start, &p);
	if (!err)
		err = hs_daemon__snapshot(d, p, NULL,
					  allocs && !secs ? p->created_ns : t0,
					  secs ? &before : &snap);
	pthread_mutex_unlock(&d->lock);
	if (err)
		return get_error(d, c, err, pid);
	if (secs) {
		struct hs_stack_agg *b_aggs = before.aggs;
		bool gone = false;

		for (long i = 0; i < secs * 10 && !*d->exiting && !gone; i++) {
			struct timespec ts = {0, 100000000};

			nanosleep(&ts, NULL);
			pthread_mutex_lock(&d->lock);
			gone = !same_proc(d, pid, before.info.start_time);
			pthread_mutex_unlock(&d->lock);
		}
		pthread_mutex_lock(&d->lock);
		hs_daemon__drain(d);
		p = same_proc(d, pid, before.info.start_time);
		if (*d->exiting)
			err = -ECANCELED;
		else if (!p)
			err = -EPIPE;
		else
			err = hs_daemon__snapshot(d, p, NULL, t0, &snap);
		before.aggs = NULL; /* kept for the difference */
		hs_daemon__release(d, &before);
		pthread_mutex_unlock(&d->lock);
		if (!err) {
			struct hs_stack_agg *delta;
			size_t n;

			err = hs_stack_table__delta(b_aggs, before.naggs,
						    snap.aggs, snap.naggs,
						    &delta, &n);
			if (err) {
				pthread_mutex_lock(&d->lock);
				hs_daemon__release(d, &snap);
				pthread_mutex_unlock(&d->lock);
			} else {
				free(snap.aggs);
				snap.aggs = delta;
				snap.naggs = n;
			}
		}
		free(b_aggs);
	}
	if (!err) {
		snap.meta.allocs = allocs;
		snap.value = allocs ? HS_VALUE_ALLOC_SPACE : HS_VALUE_INUSE;
		err = render(d, &snap, fmt, &buf, &len);
	}
	/* A process that died while we read it gives an error, not a
	 * profile of a half-read state. */
	if (!err && !hs_proc__alive((pid_t)pid)) {
		free(buf);
		err = -ESRCH;
	}
	return reply_profile(d, c, err, pid, secs, fmt, buf, len);
}

enum MHD_Result hs_http__heap(struct hs_daemon *d, struct MHD_Connection *c,
			      const struct hs_http_peer *who)
{
	const char *ssec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						       "seconds");
	enum hs_format fmt;
	long pid, secs = 0;
	uint64_t start;
	bool host = no_process(c);
	int err;

	err = host ? 0 : hs_http__target_pid(d, c, who, &pid);
	if (!err && ((ssec && parse_uint(ssec, MAX_WINDOW_S, &secs)) ||
		     parse_output(c, &fmt)))
		err = -EINVAL;
	if (err)
		return hs_http__target_error(
			d, c, err,
			"usage: /debug/pprof/heap[?pid=N|comm=NAME]"
			"[&seconds=1..300][&debug=0|1]"
			"[&format=pprof|folded|text]");
	if (host)
		return hs_http__host_profile(d, c, who, false, secs, fmt);
	/* before following it: nothing of another user's process is read */
	err = hs_http__may_read(who, (pid_t)pid, &start);
	if (err)
		return get_error(d, c, err, pid);
	return go_profile(d, c, pid, start, false, secs, fmt);
}

/* allocs?window=S: the allocations sampled during the next S seconds. */
static enum MHD_Result allocs_window(struct hs_daemon *d,
				     struct MHD_Connection *c, long pid,
				     uint64_t started, long secs,
				     enum hs_format fmt)
{
	struct hs_scrape_window w = {0}, **pp;
	struct hs_snapshot snap;
	struct hs_proc *p;
	uint8_t *buf = NULL;
	size_t len = 0;
	uint64_t start = hs_wall_ns();
	int err;

	w.prof = hs_profile__new();
	if (!w.prof)
		return hs_http__reply_error(
			d, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	pthread_mutex_lock(&d->lock);
	err = get_proc(d, pid, started, &p);
	if (!err) {
		w.proc = p;
		w.next = p->windows;
		p->windows = &w;
	}
	pthread_mutex_unlock(&d->lock);
	if (err) {
		hs_profile__free(w.prof);
		return get_error(d, c, err, pid);
	}
	for (long i = 0; i < secs * 10 && !*d->exiting; i++) {
		struct timespec ts = {0, 100000000};
		bool dead;

		nanosleep(&ts, NULL);
		pthread_mutex_lock(&d->lock);
		dead = w.dead;
		pthread_mutex_unlock(&d->lock);
		if (dead)
			break;
	}
	pthread_mutex_lock(&d->lock);
	hs_daemon__drain(d);
	if (w.dead || !w.proc) {
		err = -EPIPE;
	} else {
		for (pp = &w.proc->windows; *pp && *pp != &w; pp = &(*pp)->next)
			;
		if (*pp)
			*pp = w.next;
		err = *d->exiting ? -ECANCELED
				  : hs_daemon__snapshot(d, w.proc, &w, start,
							&snap);
	}
	pthread_mutex_unlock(&d->lock);
	if (!err)
		err = render(d, &snap, fmt, &buf, &len);
	hs_profile__free(w.prof);
	return reply_profile(d, c, err, pid, secs, fmt, buf, len);
}

enum MHD_Result hs_http__allocs(struct hs_daemon *d, struct MHD_Connection *c,
				const struct hs_http_peer *who)
{
	const char *ssec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						       "seconds"),
		   *swin = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						       "window");
	enum hs_format fmt;
	long pid, secs = 0, win = 0;
	uint64_t start;
	bool host = no_process(c);
	int err;

	err = host ? 0 : hs_http__target_pid(d, c, who, &pid);
	if (!err && ((ssec && parse_uint(ssec, MAX_WINDOW_S, &secs)) ||
		     (swin && parse_uint(swin, MAX_WINDOW_S, &win)) ||
		     (ssec && swin) || (host && swin) || parse_output(c, &fmt)))
		err = -EINVAL;
	if (err)
		return hs_http__target_error(
			d, c, err,
			"usage: /debug/pprof/allocs[?pid=N|comm=NAME]"
			"[&seconds=1..300|&window=1..300 (with "
			"pid= or comm=)][&debug=0|1]"
			"[&format=pprof|folded|text]");
	if (host)
		return hs_http__host_profile(d, c, who, true, secs, fmt);
	err = hs_http__may_read(who, (pid_t)pid, &start);
	if (err)
		return get_error(d, c, err, pid);
	if (win)
		return allocs_window(d, c, pid, start, win, fmt);
	return go_profile(d, c, pid, start, true, secs, fmt);
}

/* s as HTML text: & < > " ' escaped. */
static void html_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

enum MHD_Result hs_http__index(struct hs_daemon *d, struct MHD_Connection *c,
			       const struct hs_http_peer *who)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return hs_http__reply_error(
			d, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
	      "<title>/debug/pprof/</title></head><body>\n"
	      "<h1>/debug/pprof/</h1>\n"
	      "<p>Types of profiles available, per followed process "
	      "(?pid=N or ?comm=NAME):</p>\n<dl>\n"
	      "<dt>allocs</dt><dd>A sampling of all memory allocations "
	      "since heapscope first followed the process.</dd>\n"
	      "<dt>heap</dt><dd>A sampling of memory allocations of live "
	      "objects.</dd>\n</dl>\n"
	      "<p>?debug=1: text instead of pprof; ?seconds=N: the "
	      "difference over the next N seconds; allocs?window=N: only "
	      "the allocations of the next N seconds.</p>\n"
	      "<p>Every process in one profile (the host profile, each "
	      "sample labelled with its process): "
	      "<a href=\"/debug/pprof/allocs?debug=1\">allocs</a> "
	      "<a href=\"/debug/pprof/heap?debug=1\">heap</a></p>\n"
	      "<table>\n<tr><th>pid</th><th>comm</th><th>profiles</th>"
	      "</tr>\n",
	      f);
	pthread_mutex_lock(&d->lock);
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next) {
			if (p->gone || !hs_http__may_read_proc(who, p))
				continue;
			fprintf(f, "<tr><td>%d</td><td>", p->pid);
			html_str(f, p->info.comm);
			fprintf(f,
				"</td><td><a href=\"/debug/pprof/allocs?pid=%d"
				"&amp;debug=1\">allocs</a> "
				"<a href=\"/debug/pprof/heap?pid=%d&amp;"
				"debug=1\">heap</a> "
				"<a href=\"/debug/heapscope/rss?pid=%d\">"
				"rss</a> "
				"<a href=\"/debug/heapscope/leaks?pid=%d\">"
				"leaks</a></td></tr>\n",
				p->pid, p->pid, p->pid, p->pid);
		}
	pthread_mutex_unlock(&d->lock);
	fputs("</table>\n<p><a href=\"/debug/heapscope/oom\">pre-OOM "
	      "snapshots</a> <a href=\"/targets\">/targets</a> "
	      "<a href=\"/processes\">/processes</a> "
	      "<a href=\"/metrics\">/metrics</a></p>\n</body></html>\n",
	      f);
	return hs_http__reply_stream(d, c, f, &text, &len, "text/html; charset=utf-8");
}
