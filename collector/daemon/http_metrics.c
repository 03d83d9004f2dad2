// SPDX-License-Identifier: MIT
/*
 * http_metrics.c - the daemon's inventory and counters:
 *
 *   /processes   JSON: the followed processes
 *   /metrics     Prometheus text exposition; ?pid=N: that process's
 *                samples only (the scrape of one /targets group); with
 *                where each process's RSS went (http_rss.c)
 *
 * Both read the shared state under the daemon lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

enum MHD_Result hs_http__processes(struct hs_daemon *d,
				   struct MHD_Connection *c,
				   const struct hs_http_peer *who)
{
	char *text = NULL;
	size_t len = 0;
	bool first = true;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return hs_http__reply_error(
			d, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	fputs("[", f);
	pthread_mutex_lock(&d->lock);
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++) {
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next) {
			struct heapscope_registry h;
			int64_t period = p->ev.period;

			if (p->gone || !hs_http__may_read_proc(who, p))
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
			hs_json__str(f, p->info.comm);
			fputs(", \"binary\": ", f);
			hs_json__str(f, p->info.binary);
			fputs(", \"library\": ", f);
			hs_json__str(f, p->t.path);
			/* whose probes: heapscope, otel_memory, ddheap */
			fputs(", \"provider\": ", f);
			hs_json__str(f,
				     hs_provider_name(
					     p->t.provider == HS_PROVIDER_AUTO
						     ? HS_PROVIDER_HEAPSCOPE
						     : p->t.provider));
			fputs(", \"cgroup\": ", f);
			hs_json__str(f, p->info.cgroup);
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
	return hs_http__reply_stream(d, c, f, &text, &len, "application/json");
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

enum MHD_Result hs_http__metrics(struct hs_daemon *d, struct MHD_Connection *c,
				 const struct hs_http_peer *who)
{
	/* reason label of each HS_LOST_* slot */
	static const char *const lost_names[] = {"ringbuf", "stack", "args"};
	_Static_assert(sizeof(lost_names) / sizeof(lost_names[0]) == HS_LOST_NR,
		       "a reason per lost slot");
	const char *spid =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
	char *text = NULL, *end;
	size_t len = 0;
	bool *mine = NULL;
	struct hs_rss_job *rss_jobs = NULL;
	size_t i, rss_n = 0;
	long only = 0; /* 0: every process and the daemon's counters */
	FILE *f;

	if (spid) {
		errno = 0;
		only = strtol(spid, &end, 10);
		if (*spid < '1' || *spid > '9' || strlen(spid) > 10 || errno ||
		    *end || only <= 0 || only > INT32_MAX)
			return hs_http__reply_error(d, c, MHD_HTTP_BAD_REQUEST,
						    "usage: /metrics[?pid=N]");
	}
	f = open_memstream(&text, &len);
	if (!f)
		return hs_http__reply_error(
			d, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	pthread_mutex_lock(&d->lock);
	/* Per-process series: only the processes who may read, decided
	 * once (a /proc read each for a non-root peer), in table order. */
	i = 0;
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next)
			i++;
	mine = calloc(i + 1, sizeof(*mine));
	i = 0;
	for (size_t b = 0; mine && b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next)
			mine[i++] = hs_http__may_read_proc(who, p);
	if (only) {
		struct hs_proc *p = hs_daemon__find(d, (pid_t)only);
		bool gone = !p || p->gone;

		if (gone || !hs_http__may_read_proc(who, p)) {
			pthread_mutex_unlock(&d->lock);
			fclose(f);
			free(text);
			free(mine);
			return gone ? hs_http__reply_error(
					      d, c, MHD_HTTP_NOT_FOUND,
					      "no such followed process")
				    : hs_http__reply_error(
					      d, c, MHD_HTTP_FORBIDDEN,
					      "another user's process");
		}
		goto per_process;
	}
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
	for (int i = 0; i < HS_LOST_NR; i++)
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
		"heapscope_dumps_total{result=\"error\"} %llu\n"
		"# HELP heapscope_http_busy_total Connections answered 503 "
		"(over the connection limit).\n"
		"# TYPE heapscope_http_busy_total counter\n"
		"heapscope_http_busy_total %llu\n",
		d->nprocs, (unsigned long long)d->procs_seen,
		(unsigned long long)d->scrape_errors,
		(unsigned long long)d->http_requests,
		(unsigned long long)d->dumps,
		(unsigned long long)d->dump_errors,
		(unsigned long long)__atomic_load_n(&d->http_busy,
						    __ATOMIC_RELAXED));
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
			"# HELP heapscope_symbol_cache_entries Addresses in "
			"the "
			"shared symbol cache.\n"
			"# TYPE heapscope_symbol_cache_entries gauge\n"
			"heapscope_symbol_cache_entries %zu\n",
			(unsigned long long)hits, (unsigned long long)misses,
			entries);
	}
	hs_http__oom_metrics(f, d); /* http_oom.c */
per_process:
	fputs("# HELP heapscope_process_lost_events_total Events lost per "
	      "process: dropped by a full ring buffer, or seen missing "
	      "as sequence gaps.\n"
	      "# TYPE heapscope_process_lost_events_total counter\n",
	      f);
	i = 0;
	for (size_t b = 0; mine && b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next) {
			if (!mine[i++] || (only && p->pid != only))
				continue;
			prom_proc_sample(f,
					 "heapscope_process_lost_events_total",
					 p, ",reason=\"ringbuf\"",
					 (double)hs_daemon__lost(d, p->pid));
			prom_proc_sample(
				f, "heapscope_process_lost_events_total", p,
				",reason=\"sequence_gap\"",
				(double)hs_profile__seq_lost(p->ev.prof));
		}
	fputs("# HELP heapscope_process_sampled_bytes Estimated in-use heap "
	      "bytes from the live samples, per process.\n"
	      "# TYPE heapscope_process_sampled_bytes gauge\n",
	      f);
	i = 0;
	for (size_t b = 0; mine && b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next)
			if (mine[i++] && (!only || p->pid == only))
				prom_proc_sample(
					f, "heapscope_process_sampled_bytes", p,
					"", hs_daemon__inuse(p));
	fputs("# HELP heapscope_process_live_samples Live sampled "
	      "allocations per process.\n"
	      "# TYPE heapscope_process_live_samples gauge\n",
	      f);
	i = 0;
	for (size_t b = 0; mine && b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next)
			if (mine[i++] && (!only || p->pid == only))
				prom_proc_sample(
					f, "heapscope_process_live_samples", p,
					"",
					(double)hs_profile__live(p->ev.prof));
	/* where each process's RSS went: read after the lock */
	if (hs_http__rss_collect(d, mine, only, &rss_jobs, &rss_n)) {
		free(mine);
		mine = NULL; /* out of memory: answered as such below */
	}
	pthread_mutex_unlock(&d->lock);
	if (mine)
		hs_http__rss_metrics(f, rss_jobs, rss_n);
	free(rss_jobs);
	/* without mine the per-process series are missing: no answer */
	if (fclose(f) || !mine) {
		free(mine);
		free(text);
		return hs_http__reply_error(
			d, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	free(mine);
	return hs_http__reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4", text,
			      len, true);
}
