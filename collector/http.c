// SPDX-License-Identifier: MIT
/*
 * http.c - the daemon's HTTP endpoints (libmicrohttpd, one thread per
 * connection, a bounded number of connections, idle connections timed
 * out, GET only, no request bodies):
 *
 *   /debug/pprof/heap?pid=N[&format=pprof|folded|text]
 *   /debug/pprof/allocs?pid=N[&seconds=S][&format=...]
 *   /processes   JSON
 *   /metrics     Prometheus text exposition
 *
 * Errors: malformed query -> 400, unknown pid / not a heapscope process ->
 * 404, the process exits during an allocs window -> 410, profile cannot
 * be built (the process died mid-read, out of memory) -> 500.  Handlers
 * take the daemon lock only while they read the shared state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "daemon.h"

#define MAX_CONNECTIONS 32
#define IDLE_TIMEOUT_S 30
#define MAX_WINDOW_S 300
#define DEFAULT_WINDOW_S 10

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *type, void *body, size_t len,
			     bool must_free)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body, must_free ? MHD_RESPMEM_MUST_FREE
				     : MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r) {
		if (must_free)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_error(struct hs_daemon *d,
				   struct MHD_Connection *c, unsigned status,
				   const char *msg)
{
	char buf[300];
	int n = snprintf(buf, sizeof(buf), "%s\n", msg);

	pthread_mutex_lock(&d->lock);
	d->scrape_errors++;
	pthread_mutex_unlock(&d->lock);
	return reply(c, status, "text/plain; charset=utf-8", buf,
		     n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1,
		     false);
}

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

static enum MHD_Result get_error(struct hs_daemon *d, struct MHD_Connection *c,
				 int err, long pid)
{
	char msg[200];

	if (err == -ESRCH) {
		snprintf(msg, sizeof(msg), "no process %ld", pid);
		return reply_error(d, c, MHD_HTTP_NOT_FOUND, msg);
	}
	if (err == -ENOENT) {
		snprintf(msg, sizeof(msg),
			 "process %ld does not use the heapscope library "
			 "given to the daemon (--lib)",
			 pid);
		return reply_error(d, c, MHD_HTTP_NOT_FOUND, msg);
	}
	snprintf(msg, sizeof(msg), "cannot profile process %ld: %s", pid,
		 strerror(-err));
	return reply_error(d, c, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
}

/*
 * The process a request names: ?pid=N, or ?comm=NAME for the one followed
 * process with that comm (so a scrape config need not know pids).
 * -EINVAL: neither or malformed; -ESRCH: no such comm; -ENOTUNIQ: several.
 */
static int target_pid(struct hs_daemon *d, struct MHD_Connection *c,
		      long *pid)
{
	const char *spid = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						       "pid"),
		   *comm = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						       "comm");
	int found = 0;

	if (spid)
		return parse_uint(spid, INT32_MAX, pid);
	if (!comm || !*comm || strlen(comm) >= 16)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next)
			if (!p->gone && !strcmp(p->info.comm, comm)) {
				*pid = p->pid;
				found++;
			}
	pthread_mutex_unlock(&d->lock);
	return found == 1 ? 0 : found ? -ENOTUNIQ : -ESRCH;
}

static enum MHD_Result target_error(struct hs_daemon *d,
				    struct MHD_Connection *c, int err,
				    const char *usage)
{
	if (err == -ESRCH)
		return reply_error(d, c, MHD_HTTP_NOT_FOUND,
				   "no followed process with that comm");
	if (err == -ENOTUNIQ)
		return reply_error(d, c, MHD_HTTP_CONFLICT,
				   "several processes with that comm; use pid=");
	return reply_error(d, c, MHD_HTTP_BAD_REQUEST, usage);
}

static enum MHD_Result heap(struct hs_daemon *d, struct MHD_Connection *c)
{
	struct hs_snapshot snap;
	enum hs_format fmt;
	struct hs_proc *p;
	uint8_t *buf = NULL;
	size_t len = 0;
	long pid;
	int err;

	err = target_pid(d, c, &pid);
	if (!err && parse_format(MHD_lookup_connection_value(
					 c, MHD_GET_ARGUMENT_KIND, "format"),
				 &fmt))
		err = -EINVAL;
	if (err)
		return target_error(d, c, err,
				    "usage: /debug/pprof/heap?pid=N|comm=NAME"
				    "[&format=pprof|folded|text]");
	pthread_mutex_lock(&d->lock);
	err = hs_daemon__get(d, (pid_t)pid, &p);
	if (!err)
		err = hs_daemon__snapshot(d, p, NULL, wall_ns(), &snap);
	pthread_mutex_unlock(&d->lock);
	if (!err) {
		err = hs_daemon__render(&snap, fmt, &buf, &len);
		pthread_mutex_lock(&d->lock);
		hs_daemon__release(d, &snap);
		pthread_mutex_unlock(&d->lock);
	}
	/* A process that died while we read it gives an error, not a
	 * profile of a half-read state. */
	if (!err && kill((pid_t)pid, 0) && errno == ESRCH) {
		free(buf);
		err = -ESRCH;
	}
	if (err)
		return get_error(d, c, err, pid);
	return reply(c, MHD_HTTP_OK, content_type(fmt), buf, len, true);
}

static enum MHD_Result allocs(struct hs_daemon *d, struct MHD_Connection *c)
{
	const char *ssec = MHD_lookup_connection_value(
		c, MHD_GET_ARGUMENT_KIND, "seconds");
	struct hs_scrape_window w = {0}, **pp;
	struct hs_snapshot snap;
	enum hs_format fmt;
	struct hs_proc *p;
	uint8_t *buf = NULL;
	size_t len = 0;
	long pid, secs = DEFAULT_WINDOW_S;
	uint64_t start = wall_ns();
	int err;

	err = target_pid(d, c, &pid);
	if (!err && ((ssec && parse_uint(ssec, MAX_WINDOW_S, &secs)) ||
		     parse_format(MHD_lookup_connection_value(
					  c, MHD_GET_ARGUMENT_KIND, "format"),
				  &fmt)))
		err = -EINVAL;
	if (err)
		return target_error(d, c, err,
				    "usage: /debug/pprof/allocs?pid=N|comm=NAME"
				    "[&seconds=1..300][&format=pprof|folded|"
				    "text]");
	w.prof = hs_profile__new();
	if (!w.prof)
		return reply_error(d, c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "out of memory");
	pthread_mutex_lock(&d->lock);
	err = hs_daemon__get(d, (pid_t)pid, &p);
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
	if (w.dead || !w.proc) {
		err = -EPIPE;
	} else {
		for (pp = &w.proc->windows; *pp && *pp != &w;
		     pp = &(*pp)->next)
			;
		if (*pp)
			*pp = w.next;
		err = *d->exiting ? -ECANCELED
				  : hs_daemon__snapshot(d, w.proc, &w, start,
							&snap);
	}
	pthread_mutex_unlock(&d->lock);
	if (!err) {
		err = hs_daemon__render(&snap, fmt, &buf, &len);
		pthread_mutex_lock(&d->lock);
		hs_daemon__release(d, &snap);
		pthread_mutex_unlock(&d->lock);
	}
	hs_profile__free(w.prof);
	if (err == -EPIPE) {
		char msg[120];

		snprintf(msg, sizeof(msg),
			 "process %ld exited or called exec during the "
			 "window",
			 pid);
		return reply_error(d, c, MHD_HTTP_GONE, msg);
	}
	if (err == -ECANCELED)
		return reply_error(d, c, MHD_HTTP_SERVICE_UNAVAILABLE,
				   "daemon shutting down");
	if (err)
		return get_error(d, c, err, pid);
	return reply(c, MHD_HTTP_OK, content_type(fmt), buf, len, true);
}

/* JSON string body (escaped) of s. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static enum MHD_Result processes(struct hs_daemon *d, struct MHD_Connection *c)
{
	char *text = NULL;
	size_t len = 0;
	bool first = true;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return reply_error(d, c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "out of memory");
	fputs("[", f);
	pthread_mutex_lock(&d->lock);
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++) {
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next) {
			struct heapscope_registry h;
			int64_t period = p->ev.period;

			if (p->gone)
				continue;
			/* The registry is authoritative for the period (a
			 * rate_change event may have been lost). */
			if (p->reg_addr &&
			    !hs_registry__read_header(p->pid, p->reg_addr, &h))
				period = h.sample_period;
			fprintf(f,
				"%s\n {\"pid\": %d, \"nspid\": %d, "
				"\"comm\": ",
				first ? "" : ",", p->pid, p->info.nspid);
			json_str(f, p->info.comm);
			fputs(", \"binary\": ", f);
			json_str(f, p->info.binary);
			fputs(", \"library\": ", f);
			json_str(f, p->t.path);
			fputs(", \"cgroup\": ", f);
			json_str(f, p->info.cgroup);
			fprintf(f,
				", \"start_time\": %llu, \"samples\": %zu, "
				"\"estimated_heap_bytes\": %.0f, "
				"\"sampling_period\": %lld, \"events\": "
				"%llu, \"lost_events\": %llu, "
				"\"lost_ringbuf_events\": %llu}",
				(unsigned long long)p->start_time,
				hs_profile__live(p->ev.prof),
				hs_daemon__inuse(p), (long long)period,
				(unsigned long long)(p->ev.allocs +
						     p->ev.frees),
				(unsigned long long)hs_profile__seq_lost(
					p->ev.prof),
				(unsigned long long)hs_daemon__lost(d, p->pid));
			first = false;
		}
	}
	pthread_mutex_unlock(&d->lock);
	fputs("\n]\n", f);
	if (fclose(f)) {
		free(text);
		return reply_error(d, c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "out of memory");
	}
	return reply(c, MHD_HTTP_OK, "application/json", text, len, true);
}

/* Prometheus label value: escape \, " and newline. */
static void prom_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* One per-process sample: METRIC{pid="N",comm="C"EXTRA} VALUE (integral
 * values print exactly up to 2^53). */
static void prom_proc_sample(FILE *f, const char *metric,
			     const struct hs_proc *p, const char *extra,
			     double value)
{
	fprintf(f, "%s{pid=\"%d\",comm=\"", metric, p->pid);
	prom_label(f, p->info.comm);
	fprintf(f, "\"%s} %.0f\n", extra, value);
}

static enum MHD_Result metrics(struct hs_daemon *d, struct MHD_Connection *c)
{
	static const char *const lost_names[] = {"ringbuf", "stack", "args"};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return MHD_NO;
	pthread_mutex_lock(&d->lock);
	fprintf(f,
		"# HELP heapscope_events_total Sample events consumed from "
		"the ring buffer.\n"
		"# TYPE heapscope_events_total counter\n"
		"heapscope_events_total{type=\"alloc\"} %llu\n"
		"heapscope_events_total{type=\"free\"} %llu\n"
		"heapscope_events_total{type=\"malformed\"} %llu\n",
		(unsigned long long)d->allocs, (unsigned long long)d->frees,
		(unsigned long long)d->bad);
	fputs("# HELP heapscope_lost_events_total Events lost in the BPF "
	      "programs (all processes).\n"
	      "# TYPE heapscope_lost_events_total counter\n",
	      f);
	for (int i = 0; i < 3; i++)
		fprintf(f, "heapscope_lost_events_total{reason=\"%s\"} %llu\n",
			lost_names[i], (unsigned long long)d->lost[i]);
	fprintf(f,
		"# HELP heapscope_attached_processes Processes followed "
		"now.\n"
		"# TYPE heapscope_attached_processes gauge\n"
		"heapscope_attached_processes %zu\n"
		"# HELP heapscope_processes_seen_total Processes followed "
		"since start.\n"
		"# TYPE heapscope_processes_seen_total counter\n"
		"heapscope_processes_seen_total %llu\n"
		"# HELP heapscope_scrape_errors_total HTTP requests answered "
		"with an error.\n"
		"# TYPE heapscope_scrape_errors_total counter\n"
		"heapscope_scrape_errors_total %llu\n"
		"# HELP heapscope_http_requests_total HTTP requests.\n"
		"# TYPE heapscope_http_requests_total counter\n"
		"heapscope_http_requests_total %llu\n"
		"# HELP heapscope_dumps_total SIGHUP profile dumps "
		"written.\n"
		"# TYPE heapscope_dumps_total counter\n"
		"heapscope_dumps_total{result=\"ok\"} %llu\n"
		"heapscope_dumps_total{result=\"error\"} %llu\n",
		d->nprocs, (unsigned long long)d->procs_seen,
		(unsigned long long)d->scrape_errors,
		(unsigned long long)d->http_requests,
		(unsigned long long)d->dumps,
		(unsigned long long)d->dump_errors);
	{
		uint64_t hits, misses;
		size_t entries;

		hs_syms__cache_stats(&hits, &misses, &entries);
		fprintf(f,
			"# HELP heapscope_symbol_cache_lookups_total Lookups "
			"in the symbol cache shared by build id.\n"
			"# TYPE heapscope_symbol_cache_lookups_total counter\n"
			"heapscope_symbol_cache_lookups_total{result=\"hit\"} "
			"%llu\n"
			"heapscope_symbol_cache_lookups_total{result=\"miss\"} "
			"%llu\n"
			"# HELP heapscope_symbol_cache_entries Addresses in the "
			"shared symbol cache.\n"
			"# TYPE heapscope_symbol_cache_entries gauge\n"
			"heapscope_symbol_cache_entries %zu\n",
			(unsigned long long)hits, (unsigned long long)misses,
			entries);
	}
	fputs("# HELP heapscope_process_lost_events_total Events lost per "
	      "process: dropped by a full ring buffer, or seen missing "
	      "as sequence gaps.\n"
	      "# TYPE heapscope_process_lost_events_total counter\n",
	      f);
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next) {
			prom_proc_sample(f, "heapscope_process_lost_events_total",
					 p, ",reason=\"ringbuf\"",
					 (double)hs_daemon__lost(d, p->pid));
			prom_proc_sample(f, "heapscope_process_lost_events_total",
					 p, ",reason=\"sequence_gap\"",
					 (double)hs_profile__seq_lost(p->ev.prof));
		}
	fputs("# HELP heapscope_process_sampled_bytes Estimated in-use heap "
	      "bytes from the live samples, per process.\n"
	      "# TYPE heapscope_process_sampled_bytes gauge\n",
	      f);
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next)
			prom_proc_sample(f, "heapscope_process_sampled_bytes", p,
					 "", hs_daemon__inuse(p));
	fputs("# HELP heapscope_process_live_samples Live sampled "
	      "allocations per process.\n"
	      "# TYPE heapscope_process_live_samples gauge\n",
	      f);
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next)
			prom_proc_sample(f, "heapscope_process_live_samples", p,
					 "",
					 (double)hs_profile__live(p->ev.prof));
	pthread_mutex_unlock(&d->lock);
	if (fclose(f)) {
		free(text);
		return MHD_NO;
	}
	return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4", text, len,
		     true);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	static int marker;
	struct hs_daemon *d = cls;

	(void)version;
	(void)upload_data;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_error(d, c, MHD_HTTP_METHOD_NOT_ALLOWED,
				   "only GET");
	if (*upload_data_size)
		return reply_error(d, c, MHD_HTTP_CONTENT_TOO_LARGE,
				   "no request bodies");
	if (!*con_cls) { /* headers only so far */
		*con_cls = &marker;
		return MHD_YES;
	}
	pthread_mutex_lock(&d->lock);
	d->http_requests++;
	pthread_mutex_unlock(&d->lock);
	if (!strcmp(url, "/debug/pprof/heap"))
		return heap(d, c);
	if (!strcmp(url, "/debug/pprof/allocs"))
		return allocs(d, c);
	if (!strcmp(url, "/processes"))
		return processes(d, c);
	if (!strcmp(url, "/metrics"))
		return metrics(d, c);
	if (!strcmp(url, "/") || !strcmp(url, "/debug/pprof/"))
		return reply(c, MHD_HTTP_OK, "text/plain; charset=utf-8",
			     (void *)"heapscope daemon: /debug/pprof/heap?pid=N "
				     "/debug/pprof/allocs?pid=N&seconds=S "
				     "/processes /metrics\n",
			     95, false);
	return reply_error(d, c, MHD_HTTP_NOT_FOUND, "no such endpoint");
}

int hs_http__start(struct hs_daemon *d, void **out)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL;
	struct MHD_Daemon *m;

	if (d->listen_addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	m = MHD_start_daemon(
		flags, 0, NULL, NULL, handle, d, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&d->listen_addr, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)IDLE_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)(64 * 1024), MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned)16, MHD_OPTION_END);
	if (!m)
		return errno ? -errno : -EADDRINUSE;
	*out = m;
	return 0;
}

void hs_http__stop(void *h)
{
	if (h)
		MHD_stop_daemon(h);
}
