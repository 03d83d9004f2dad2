// SPDX-License-Identifier: MIT
/*
 * http_targets.c - /targets: Prometheus HTTP service discovery (the
 * http_sd format Prometheus, Parca and Grafana Alloy's discovery.http
 * read): a JSON array with one target group per followed process,
 *
 *   {"targets": ["HOST:PORT"], "labels": {"__param_pid": "N", "pid": "N",
 *    "comm": ..., "exe": ..., "cgroup": ..., "container_id": ...,
 *    "systemd_unit": ...}}
 *
 * HOST:PORT is this daemon as the client reached it (the Host header when
 * it is a plain host[:port], else --listen), so a scraper that follows the
 * group scrapes /metrics or /debug/pprof/... here with ?pid=N (the
 * __param_pid label).  container_id and systemd_unit appear only when the
 * cgroup path names them (hs_proc__cgroup_ids).  Label values are
 * JSON-escaped and invalid UTF-8 becomes U+FFFD: comm and the paths are
 * chosen by the target.
 */
#include <stdlib.h>
#include <string.h>

#include "http.h"

/* A Host header we may echo: host or [v6] with an optional :port, only
 * [A-Za-z0-9.-] in a name, at most 255 bytes. */
static bool host_ok(const char *h)
{
	size_t len = h ? strlen(h) : 0, i = 0;

	if (!len || len > 255)
		return false;
	if (h[0] == '[') {
		for (i = 1; h[i] && h[i] != ']'; i++)
			if (!strchr("0123456789abcdefABCDEF:.", h[i]))
				return false;
		if (h[i] != ']' || i == 1)
			return false;
		i++;
	} else {
		for (; h[i] && h[i] != ':'; i++)
			if (!((h[i] >= 'a' && h[i] <= 'z') ||
			      (h[i] >= 'A' && h[i] <= 'Z') ||
			      (h[i] >= '0' && h[i] <= '9') || h[i] == '.' ||
			      h[i] == '-'))
				return false;
		if (!i)
			return false;
	}
	if (!h[i])
		return true;
	if (h[i] != ':' || !h[i + 1] || strlen(h + i + 1) > 5)
		return false;
	for (i++; h[i]; i++)
		if (h[i] < '0' || h[i] > '9')
			return false;
	return true;
}

static void label(FILE *f, const char *name, const char *value, bool comma)
{
	fprintf(f, "%s\"%s\": ", comma ? ", " : "", name);
	hs_json__str(f, value);
}

/* The first TCP --listen address as given ("localhost" with only unix
 * sockets, which a scraper cannot reach by address anyway). */
static const char *tcp_listen_text(const struct hs_daemon *d)
{
	for (size_t i = 0; i < d->nlisten; i++)
		if (d->listen[i].addr.ss_family != AF_UNIX)
			return d->listen[i].text;
	return "localhost";
}

enum MHD_Result hs_http__targets(struct hs_daemon *d, struct MHD_Connection *c,
				 const struct hs_http_peer *who)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_HOST);
	char *text = NULL;
	size_t len = 0;
	bool first = true;
	FILE *f;

	/* With no usable Host header, the address we listen on: the port
	 * is right even when the host part is a wildcard. */
	if (!host_ok(host))
		host = tcp_listen_text(d);
	f = open_memstream(&text, &len);
	if (!f)
		return hs_http__reply_error(
			d, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	fputs("[", f);
	pthread_mutex_lock(&d->lock);
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++) {
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next) {
			char pid[16], id[HS_CONTAINER_ID_LEN + 1], unit[256];

			if (p->gone || !hs_http__may_read_proc(who, p))
				continue;
			snprintf(pid, sizeof(pid), "%d", p->pid);
			hs_proc__cgroup_ids(p->info.cgroup, id, unit,
					    sizeof(unit));
			fprintf(f, "%s\n {\"targets\": [", first ? "" : ",");
			hs_json__str(f, host);
			fputs("], \"labels\": {", f);
			label(f, "__param_pid", pid, false);
			label(f, "pid", pid, true);
			label(f, "comm", p->info.comm, true);
			label(f, "exe", p->info.binary, true);
			label(f, "cgroup", p->info.cgroup, true);
			if (id[0])
				label(f, "container_id", id, true);
			if (unit[0])
				label(f, "systemd_unit", unit, true);
			fputs("}}", f);
			first = false;
		}
	}
	pthread_mutex_unlock(&d->lock);
	fputs("\n]\n", f);
	return hs_http__reply_stream(d, c, f, &text, &len, "application/json");
}
