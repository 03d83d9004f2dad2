/* SPDX-License-Identifier: MIT */
/*
 * http.h - the daemon's HTTP server across its files: listeners and
 * connection admission (http_server.c), request checks and routing
 * (http.c), who may read what (http_access.c), and the endpoint handlers
 * (http_profiles.c, http_host.c, http_metrics.c, http_targets.c,
 * http_rss.c, http_oom.c, http_leaks.c).  Handlers run in libmicrohttpd's
 * connection threads, many at once: they take d->lock only to read or
 * count shared state, never while they symbolize or encode.  Each returns what
 * libmicrohttpd's access handler returns: MHD_YES once a response is
 * queued, MHD_NO to drop the connection (no response could be made).
 */
#ifndef HS_HTTP_H
#define HS_HTTP_H

#include <stdio.h>

#include <microhttpd.h>

#include "daemon.h"

/* Who is asking, and so which processes a request may see. */
struct hs_http_peer {
	bool all;  /* every process: root over a unix socket, or TCP (with
		    * the --token-file token when one is set) */
	uid_t uid; /* otherwise only the processes this uid owns */
};

/* One connection, from libmicrohttpd's connection notification until it
 * closes (its socket context). */
struct hs_http_conn {
	bool admitted;		  /* within the soft limit: served; else 503 */
	bool is_unix;		  /* accepted on a unix socket */
	int peer_err;		  /* unix: SO_PEERCRED failed (-errno) */
	struct hs_http_peer peer; /* unix: from SO_PEERCRED */
};

/* ------------------------------------------------------------ http.c */

/* libmicrohttpd's access handler (cls: the daemon).  Answers 503 +
 * Retry-After to a connection over the limit, 401 to TCP without the
 * token, 403 to a unix peer whose credentials cannot be read, 400 to a
 * request with an encoded NUL or a repeated parameter, 405 + Allow to
 * other methods than GET and HEAD, 413 to a body; then routes. */
enum MHD_Result hs_http__handle(void *cls, struct MHD_Connection *c,
				const char *url, const char *method,
				const char *version, const char *upload_data,
				size_t *upload_data_size, void **con_cls);
/* libmicrohttpd's URI log callback: sees the request line's URI before
 * it is decoded, and marks a request carrying %00 (its return value is
 * the request's *con_cls). */
void *hs_http__uri_log(void *cls, const char *uri, struct MHD_Connection *c);

/* Queue a response with the given status and Content-Type.  body is
 * copied (must_free false) or owned and freed with the response
 * (must_free true; also freed when no response can be made). */
enum MHD_Result hs_http__reply(struct MHD_Connection *c, unsigned status,
			       const char *type, void *body, size_t len,
			       bool must_free);
/* Close the open_memstream f over *text / *len and queue its bytes as a
 * 200 of Content-Type type (owned by the response); 500 "out of memory"
 * when the stream failed. */
enum MHD_Result hs_http__reply_stream(struct hs_daemon *d,
				      struct MHD_Connection *c, FILE *f,
				      char **text, size_t *len,
				      const char *type);
/* Queue a text/plain error "msg\n" (truncated at 299 bytes) and count it
 * in d->scrape_errors (takes d->lock). */
enum MHD_Result hs_http__reply_error(struct hs_daemon *d,
				     struct MHD_Connection *c, unsigned status,
				     const char *msg);

/* ------------------------------------------------------------ http_access.c */

/* Read --token-file path into d->token: a regular file (a symlink to one
 * is followed) that neither group nor others may read or write, holding
 * 1..HS_TOKEN_MAX printable non-space characters (one trailing newline
 * dropped).  0, or -EINVAL after the one-line error saying what is
 * wrong. */
int hs_http__load_token(struct hs_daemon *d, const char *path);
/* Does the Authorization header value h carry d's token ("Bearer TOKEN",
 * the scheme in any case)?  Takes the same time wherever the two differ
 * (it depends only on the token's length).  h NULL: false. */
bool hs_http__token_ok(const struct hs_daemon *d, const char *h);
/* The credentials of a unix-socket peer (SO_PEERCRED on fd): root may
 * read everything, another uid its own processes.  0 or -errno. */
int hs_http__unix_peer(int fd, struct hs_http_peer *who);
/*
 * May who read process pid?  A non-root peer may read a process whose
 * real, effective, saved and filesystem uids are all its uid and which is
 * dumpable (the kernel's rule for ptrace by the same user: a set-uid
 * program run by that user is not its to read).  0, with *start the
 * process's start time (0 when who reads everything: nothing looked up);
 * -EACCES: another user's; -ESRCH: no such process.  Thread-safe.
 */
int hs_http__may_read(const struct hs_http_peer *who, pid_t pid,
		      uint64_t *start);
/* hs_http__may_read for a followed process, matched by its start time
 * too (a reused pid is another process).  Under d->lock. */
bool hs_http__may_read_proc(const struct hs_http_peer *who,
			    const struct hs_proc *p);

/*
 * The process a request names: ?pid=N, or ?comm=NAME for the one followed
 * process with that comm that who may read (so a scrape config need not
 * know pids).  -EINVAL: neither or malformed; -ESRCH: no such comm;
 * -ENOTUNIQ: several.  Takes d->lock.  hs_http__target_error answers
 * those: 404, 409, else 400 with `usage`.
 */
int hs_http__target_pid(struct hs_daemon *d, struct MHD_Connection *c,
			const struct hs_http_peer *who, long *pid);
enum MHD_Result hs_http__target_error(struct hs_daemon *d,
				      struct MHD_Connection *c, int err,
				      const char *usage);

/* ------------------------------------------------------------ endpoints */

/* http_profiles.c, as Go's net/http/pprof: /debug/pprof/heap and
 * /debug/pprof/allocs of the process named by ?pid= or ?comm= (among those
 * who may read), one profile with alloc_objects, alloc_space (since the
 * daemon first followed it), inuse_objects, inuse_space; answered at once,
 * or with ?seconds=1..300 the difference over that many seconds (blocks the
 * connection thread that long); allocs?window=1..300: only the allocations
 * sampled meanwhile.  pprof unless ?debug=1 (text) or ?format=folded|text.
 * Errors as HTTP status: 400, 403 (another user's process), 404, 409, 410,
 * 500, 503 (shutting down).
 * hs_http__index: the HTML index of /debug/pprof/ (profiles, and the
 * processes who may read). */
enum MHD_Result hs_http__heap(struct hs_daemon *d, struct MHD_Connection *c,
			      const struct hs_http_peer *who);
enum MHD_Result hs_http__allocs(struct hs_daemon *d, struct MHD_Connection *c,
				const struct hs_http_peer *who);
enum MHD_Result hs_http__index(struct hs_daemon *d, struct MHD_Connection *c,
			       const struct hs_http_peer *who);

/* http_host.c: the host profile, heap and allocs without pid= or comm=:
 * one profile of every followed process who may read, each sample
 * labelled with its process (pid, comm, exe, cgroup, container_id,
 * systemd_unit), in fmt; allocs (alloc_space the default, alloc_* since
 * followed) or heap; secs > 0: the per-process difference over secs
 * seconds.  200 (an empty profile when there is no process), 500 (out
 * of memory), 503 (shutting down). */
enum MHD_Result hs_http__host_profile(struct hs_daemon *d,
				      struct MHD_Connection *c,
				      const struct hs_http_peer *who,
				      bool allocs, long secs,
				      enum hs_format fmt);

/* http_metrics.c: /processes (JSON array of the followed processes who
 * may read) and /metrics (Prometheus text; counters of the whole daemon,
 * and per process those who may read; with ?pid=N only that process's
 * samples: 400 if malformed, 403 another user's, 404 if not followed). */
enum MHD_Result hs_http__processes(struct hs_daemon *d,
				   struct MHD_Connection *c,
				   const struct hs_http_peer *who);
enum MHD_Result hs_http__metrics(struct hs_daemon *d, struct MHD_Connection *c,
				 const struct hs_http_peer *who);

/* http_targets.c: /targets, Prometheus HTTP service discovery JSON (one
 * target group per followed process, labelled __param_pid, pid, comm, exe,
 * cgroup, container_id, systemd_unit), of the processes who may read. */
enum MHD_Result hs_http__targets(struct hs_daemon *d, struct MHD_Connection *c,
				 const struct hs_http_peer *who);

/* http_rss.c: /debug/heapscope/rss?pid=N, where the process's RSS went
 * (JSON, export/export_rss.c): 400 malformed, 403 another user's, 404 no
 * such process / not a heapscope process / a library without the
 * statistics block, 502 a block that fails validation, 500 otherwise. */
enum MHD_Result hs_http__rss(struct hs_daemon *d, struct MHD_Connection *c,
			     const struct hs_http_peer *who);

/* One process of /metrics' RSS families: copied under d->lock, read and
 * written after it (ok: its table could be read). */
struct hs_rss_job {
	struct hs_target t;
	char comm[16];
	struct hs_rss_table table;
	bool ok;
};
/* Under d->lock: the processes /metrics shows (mine[i]: the i-th of the
 * table in bucket order may be read; only: that pid, 0 = all) into
 * *jobs (malloc'd, *n entries).  0 or -ENOMEM. */
int hs_http__rss_collect(struct hs_daemon *d, const bool *mine, long only,
			 struct hs_rss_job **jobs, size_t *n);
/* Without the lock: read each job's RSS table and write the RSS
 * families (a process that cannot be read is left out). */
void hs_http__rss_metrics(FILE *f, struct hs_rss_job *jobs, size_t n);

/* http_oom.c: /debug/heapscope/oom (JSON list of the pre-OOM snapshots
 * who may read; ?pid=N only that process's) and
 * /debug/heapscope/oom/ID.pb.gz (one snapshot, gzip'd pprof); url is the
 * request's path, which starts with /debug/heapscope/oom.  400 malformed,
 * 404 unknown or not who's to read. */
enum MHD_Result hs_http__oom(struct hs_daemon *d, struct MHD_Connection *c,
			     const struct hs_http_peer *who, const char *url);
/* The store's counters as Prometheus families (daemon-wide, in
 * /metrics): heapscope_oom_snapshots_total{reason},
 * heapscope_oom_kills_total, heapscope_oom_snapshots_kept,
 * heapscope_oom_errors_total{kind="capture"|"dump"}.  Takes d->oom.lock
 * (callers may hold d->lock). */
void hs_http__oom_metrics(FILE *f, struct hs_daemon *d);

/* http_leaks.c: /debug/heapscope/leaks?pid=N, the leak trends of a
 * followed process (export_leaks.c's JSON, most suspect first); 400
 * malformed, 403 another user's, 404 unknown or not a heapscope process,
 * 409 leak trends off (--leak-interval 0), 500. */
enum MHD_Result hs_http__leaks(struct hs_daemon *d, struct MHD_Connection *c,
			       const struct hs_http_peer *who);

#endif /* HS_HTTP_H */
