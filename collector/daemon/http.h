/* SPDX-License-Identifier: MIT */
/*
 * http.h - the daemon's HTTP server (http.c) and its endpoint handlers
 * (http_profiles.c, http_metrics.c).  Handlers run in libmicrohttpd's
 * connection threads, many at once: they take d->lock only to read or
 * count shared state, never while they symbolize or encode.  Each returns
 * what libmicrohttpd's access handler returns: MHD_YES once a response is
 * queued, MHD_NO to drop the connection (no response could be made).
 */
#ifndef HS_HTTP_H
#define HS_HTTP_H

#include <microhttpd.h>

#include "daemon.h"

/* Queue a response with the given status and Content-Type.  body is
 * copied (must_free false) or owned and freed with the response
 * (must_free true; also freed when no response can be made). */
enum MHD_Result hs_http__reply(struct MHD_Connection *c, unsigned status,
			       const char *type, void *body, size_t len,
			       bool must_free);
/* Queue a text/plain error "msg\n" (truncated at 299 bytes) and count it
 * in d->scrape_errors (takes d->lock). */
enum MHD_Result hs_http__reply_error(struct hs_daemon *d,
				     struct MHD_Connection *c, unsigned status,
				     const char *msg);

/* http_profiles.c, as Go's net/http/pprof: /debug/pprof/heap and
 * /debug/pprof/allocs of the process named by ?pid= or ?comm=, one profile
 * with alloc_objects, alloc_space (since the daemon first followed it),
 * inuse_objects, inuse_space; answered at once, or with ?seconds=1..300 the
 * difference over that many seconds (blocks the connection thread that
 * long); allocs?window=1..300: only the allocations sampled meanwhile.
 * pprof unless ?debug=1 (text) or ?format=folded|text.  Errors as HTTP
 * status: 400, 404, 409, 410, 500, 503 (shutting down).
 * hs_http__index: the HTML index of /debug/pprof/ (profiles, processes). */
enum MHD_Result hs_http__heap(struct hs_daemon *d, struct MHD_Connection *c);
enum MHD_Result hs_http__allocs(struct hs_daemon *d, struct MHD_Connection *c);
enum MHD_Result hs_http__index(struct hs_daemon *d, struct MHD_Connection *c);

/* http_metrics.c: /processes (JSON array of the followed processes) and
 * /metrics (Prometheus text; counters of the whole daemon and per
 * process; with ?pid=N only that process's samples: 400 if malformed,
 * 404 if not followed). */
enum MHD_Result hs_http__processes(struct hs_daemon *d,
				   struct MHD_Connection *c);
enum MHD_Result hs_http__metrics(struct hs_daemon *d, struct MHD_Connection *c);

/* http_targets.c: /targets, Prometheus HTTP service discovery JSON (one
 * target group per followed process, labelled __param_pid, pid, comm, exe,
 * cgroup, container_id, systemd_unit). */
enum MHD_Result hs_http__targets(struct hs_daemon *d, struct MHD_Connection *c);

#endif /* HS_HTTP_H */
