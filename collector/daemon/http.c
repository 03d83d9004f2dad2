// SPDX-License-Identifier: MIT
/*
 * http.c - the daemon's HTTP server (libmicrohttpd, one thread per
 * connection, a bounded number of connections, idle connections timed
 * out, GET only, no request bodies) and its routing to the endpoints:
 *
 *   /debug/pprof/heap, /debug/pprof/allocs,  http_profiles.c
 *   /debug/pprof/ (and /: the index)
 *   /processes, /metrics                     http_metrics.c
 *   /targets                                 http_targets.c
 *
 * Unknown paths -> 404, other methods than GET/HEAD -> 405, request
 * bodies -> 413.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

#define MAX_CONNECTIONS 32
#define IDLE_TIMEOUT_S 30

enum MHD_Result hs_http__reply(struct MHD_Connection *c, unsigned status,
			       const char *type, void *body, size_t len,
			       bool must_free)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body,
		must_free ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
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

enum MHD_Result hs_http__reply_error(struct hs_daemon *d,
				     struct MHD_Connection *c, unsigned status,
				     const char *msg)
{
	char buf[300];
	int n = snprintf(buf, sizeof(buf), "%s\n", msg);

	pthread_mutex_lock(&d->lock);
	d->scrape_errors++;
	pthread_mutex_unlock(&d->lock);
	return hs_http__reply(
		c, status, "text/plain; charset=utf-8", buf,
		n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1, false);
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
		return hs_http__reply_error(d, c, MHD_HTTP_METHOD_NOT_ALLOWED,
					    "only GET");
	if (*upload_data_size)
		return hs_http__reply_error(d, c, MHD_HTTP_CONTENT_TOO_LARGE,
					    "no request bodies");
	if (!*con_cls) { /* headers only so far */
		*con_cls = &marker;
		return MHD_YES;
	}
	pthread_mutex_lock(&d->lock);
	d->http_requests++;
	pthread_mutex_unlock(&d->lock);
	if (!strcmp(url, "/debug/pprof/heap"))
		return hs_http__heap(d, c);
	if (!strcmp(url, "/debug/pprof/allocs"))
		return hs_http__allocs(d, c);
	if (!strcmp(url, "/processes"))
		return hs_http__processes(d, c);
	if (!strcmp(url, "/metrics"))
		return hs_http__metrics(d, c);
	if (!strcmp(url, "/targets"))
		return hs_http__targets(d, c);
	if (!strcmp(url, "/") || !strcmp(url, "/debug/pprof/") ||
	    !strcmp(url, "/debug/pprof"))
		return hs_http__index(d, c);
	return hs_http__reply_error(d, c, MHD_HTTP_NOT_FOUND,
				    "no such endpoint");
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
