// SPDX-License-Identifier: MIT
/*
 * http.c - every request's checks and its routing to the endpoints:
 *
 *   /debug/pprof/heap, /debug/pprof/allocs,  http_profiles.c
 *   /debug/pprof/ (and /: the index)
 *   /processes, /metrics                     http_metrics.c
 *   /targets                                 http_targets.c
 *   /debug/heapscope/rss                     http_rss.c
 *   /debug/heapscope/oom, .../oom/ID.pb.gz    http_oom.c
 *   /debug/heapscope/leaks                   http_leaks.c
 *
 * Every request gets a status: a connection over the limit -> 503 with
 * Retry-After; TCP without the --token-file token -> 401 with
 * WWW-Authenticate; a unix peer whose credentials cannot be read -> 403;
 * an encoded NUL (%00) anywhere in the URI, a repeated query parameter or
 * Authorization header, more than MAX_ARGS parameters -> 400; other
 * methods than GET/HEAD -> 405 with Allow; request bodies -> 413; unknown
 * paths -> 404.  Listeners and admission: http_server.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http.h"

#define MAX_ARGS 16	/* query parameters per request */
#define RETRY_AFTER "1" /* seconds, in a 503's Retry-After */

/* A request's *con_cls: set by hs_http__uri_log before the first call of
 * the handler, then "headers checked" (the next call routes). */
static char req_fresh, req_nul, req_checked;

/* Queue a response with extra headers (name, value pairs, NULL-ended). */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *type, void *body, size_t len,
			     bool must_free, const char *const *headers)
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
	for (; headers && headers[0]; headers += 2)
		MHD_add_response_header(r, headers[0], headers[1]);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result hs_http__reply(struct MHD_Connection *c, unsigned status,
			       const char *type, void *body, size_t len,
			       bool must_free)
{
	return reply(c, status, type, body, len, must_free, NULL);
}

static enum MHD_Result error_with(struct hs_daemon *d, struct MHD_Connection *c,
				  unsigned status, const char *msg,
				  const char *const *headers)
{
	char buf[300];
	int n = snprintf(buf, sizeof(buf), "%s\n", msg);

	pthread_mutex_lock(&d->lock);
	d->scrape_errors++;
	pthread_mutex_unlock(&d->lock);
	return reply(c, status, "text/plain; charset=utf-8", buf,
		     n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1, false,
		     headers);
}

enum MHD_Result hs_http__reply_error(struct hs_daemon *d,
				     struct MHD_Connection *c, unsigned status,
				     const char *msg)
{
	return error_with(d, c, status, msg, NULL);
}

void *hs_http__uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls;
	(void)c;
	/* Decoded, %00 would end the path or a value early: "/metrics%00x"
	 * would read as "/metrics".  Only the raw URI shows it. */
	return uri && strstr(uri, "%00") ? &req_nul : &req_fresh;
}

/* Over the limit: answered without the daemon lock (a dump may hold it
 * for seconds), and the connection closed to free its place. */
static enum MHD_Result busy(struct hs_daemon *d, struct MHD_Connection *c)
{
	static const char *const headers[] = {"Retry-After", RETRY_AFTER,
					      "Connection", "close", NULL};
	static const char msg[] = "too many connections; retry later\n";

	__atomic_fetch_add(&d->http_busy, 1, __ATOMIC_RELAXED);
	return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE,
		     "text/plain; charset=utf-8", (void *)msg, sizeof(msg) - 1,
		     false, headers);
}

struct args_seen {
	const char *keys[MAX_ARGS];
	size_t n;
	bool repeated, too_many;
	const char *kind; /* a header name to count, or NULL: all args */
	unsigned count;
};

static enum MHD_Result note_arg(void *cls, enum MHD_ValueKind kind,
				const char *key, const char *value)
{
	struct args_seen *a = cls;

	(void)kind;
	(void)value;
	if (a->kind) { /* counting one header */
		if (key && !strcasecmp(key, a->kind))
			a->count++;
		return MHD_YES;
	}
	if (!key)
		return MHD_YES;
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->keys[i], key)) {
			a->repeated = true;
			return MHD_NO;
		}
	if (a->n == MAX_ARGS) {
		a->too_many = true;
		return MHD_NO;
	}
	a->keys[a->n++] = key;
	return MHD_YES;
}

/* TCP: the token when there is one.  Unix: the peer's credentials. */
static enum MHD_Result check_auth(struct hs_daemon *d, struct MHD_Connection *c,
				  const struct hs_http_conn *conn, bool *ok)
{
	static const char *const missing[] = {
		"WWW-Authenticate", "Bearer realm=\"heapscope\"", NULL};
	static const char *const invalid[] = {
		"WWW-Authenticate",
		"Bearer realm=\"heapscope\", error=\"invalid_token\"", NULL};
	struct args_seen a = {.kind = "Authorization"};
	const char *h;

	*ok = false;
	if (conn->is_unix) {
		if (!conn->peer_err) {
			*ok = true;
			return MHD_YES;
		}
		return hs_http__reply_error(
			d, c, MHD_HTTP_FORBIDDEN,
			"cannot read the peer's credentials (SO_PEERCRED)");
	}
	if (!d->token_len) {
		*ok = true;
		return MHD_YES;
	}
	MHD_get_connection_values(c, MHD_HEADER_KIND, note_arg, &a);
	if (a.count > 1)
		return hs_http__reply_error(d, c, MHD_HTTP_BAD_REQUEST,
					    "more than one Authorization "
					    "header");
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	if (!h)
		return error_with(d, c, MHD_HTTP_UNAUTHORIZED,
				  "this address needs 'Authorization: Bearer "
				  "TOKEN' (the daemon's --token-file)",
				  missing);
	if (!hs_http__token_ok(d, h))
		return error_with(d, c, MHD_HTTP_UNAUTHORIZED,
				  "wrong bearer token", invalid);
	*ok = true;
	return MHD_YES;
}

/* The first call, with the headers: every check that needs no body.
 * MHD_YES without a response: go on. */
static enum MHD_Result check_request(struct hs_daemon *d,
				     struct MHD_Connection *c,
				     const struct hs_http_conn *conn,
				     const char *method, bool nul)
{
	static const char *const allow[] = {"Allow", "GET, HEAD", NULL};
	struct args_seen a = {0};
	enum MHD_Result ret;
	bool ok;

	if (!conn || !conn->admitted)
		return busy(d, c);
	ret = check_auth(d, c, conn, &ok);
	if (!ok)
		return ret;
	if (nul)
		return hs_http__reply_error(d, c, MHD_HTTP_BAD_REQUEST,
					    "encoded NUL (%00) in the request");
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return error_with(d, c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "only GET and HEAD", allow);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, note_arg, &a);
	if (a.repeated)
		return hs_http__reply_error(d, c, MHD_HTTP_BAD_REQUEST,
					    "a query parameter is repeated");
	if (a.too_many)
		return hs_http__reply_error(d, c, MHD_HTTP_BAD_REQUEST,
					    "too many query parameters");
	return MHD_YES;
}

enum MHD_Result hs_http__reply_stream(struct hs_daemon *d,
				      struct MHD_Connection *c, FILE *f,
				      char **text, size_t *len,
				      const char *type)
{
	if (fclose(f)) {
		free(*text);
		return hs_http__reply_error(
			d, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	return hs_http__reply(c, MHD_HTTP_OK, type, *text, *len, true);
}

enum MHD_Result hs_http__handle(void *cls, struct MHD_Connection *c,
				const char *url, const char *method,
				const char *version, const char *upload_data,
				size_t *upload_data_size, void **con_cls)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	const struct hs_http_conn *conn = ci ? ci->socket_context : NULL;
	struct hs_daemon *d = cls;
	struct hs_http_peer who = {.all = true};

	(void)version;
	(void)upload_data;
	if (*con_cls != &req_checked) { /* headers only so far */
		bool nul = *con_cls == &req_nul;

		*con_cls = &req_checked;
		return check_request(d, c, conn, method, nul);
	}
	if (*upload_data_size)
		return hs_http__reply_error(d, c, MHD_HTTP_CONTENT_TOO_LARGE,
					    "no request bodies");
	if (conn->is_unix)
		who = conn->peer;
	pthread_mutex_lock(&d->lock);
	d->http_requests++;
	pthread_mutex_unlock(&d->lock);
	if (!strcmp(url, "/debug/pprof/heap"))
		return hs_http__heap(d, c, &who);
	if (!strcmp(url, "/debug/pprof/allocs"))
		return hs_http__allocs(d, c, &who);
	if (!strcmp(url, "/processes"))
		return hs_http__processes(d, c, &who);
	if (!strcmp(url, "/metrics"))
		return hs_http__metrics(d, c, &who);
	if (!strcmp(url, "/targets"))
		return hs_http__targets(d, c, &who);
	if (!strcmp(url, "/debug/heapscope/rss"))
		return hs_http__rss(d, c, &who);
	if (!strncmp(url, "/debug/heapscope/oom", 20) &&
	    (!url[20] || url[20] == '/'))
		return hs_http__oom(d, c, &who, url);
	if (!strcmp(url, "/debug/heapscope/leaks"))
		return hs_http__leaks(d, c, &who);
	if (!strcmp(url, "/") || !strcmp(url, "/debug/pprof/") ||
	    !strcmp(url, "/debug/pprof"))
		return hs_http__index(d, c, &who);
	return hs_http__reply_error(d, c, MHD_HTTP_NOT_FOUND,
				    "no such endpoint");
}
