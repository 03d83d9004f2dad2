// SPDX-License-Identifier: MIT
/*
 * http_server.c - the daemon's listeners and connection admission.
 *
 * The daemon makes and accepts on the listening sockets itself (TCP, and
 * unix sockets of mode 0666 whose peers http_access.c checks by uid) and
 * hands each connection to libmicrohttpd (MHD_add_connection; one thread
 * per connection).  libmicrohttpd, at its own connection limit, closes a
 * new connection without a word (the client sees a reset); here instead:
 *
 *   - up to SOFT_LIMIT connections are served;
 *   - connections beyond it, up to HARD_LIMIT held at once, get a quick
 *     503 with Retry-After and are closed (http.c);
 *   - beyond HARD_LIMIT the daemon stops accepting, and new connections
 *     wait in the kernel's listen backlog until a place frees up (a 503
 *     frees its place within milliseconds).
 *
 * libmicrohttpd's own limit is set above HARD_LIMIT, so it never closes
 * one.  Idle connections close after IDLE_TIMEOUT_S.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>

#include "clock.h"
#include "http.h"

#define SOFT_LIMIT 32		    /* connections served at once */
#define HARD_LIMIT 256		    /* connections held at once */
#define MHD_LIMIT (HARD_LIMIT + 64) /* never reached: see above */
#define IDLE_TIMEOUT_S 30
#define CONN_MEMORY (64 * 1024) /* bytes of request state per connection */

struct hs_http_server {
	struct hs_daemon *d;
	struct MHD_Daemon *mhd;
	pthread_t thread;
	bool thread_started;
	int wake[2]; /* a pipe: wakes the accept thread to stop */
	int fds[HS_DAEMON_MAX_LISTEN];
	struct { /* unix sockets made here, removed at stop */
		dev_t dev;
		ino_t ino;
	} made[HS_DAEMON_MAX_LISTEN];
	size_t n;
	pthread_mutex_t lock;
	pthread_cond_t freed;
	unsigned pending;  /* accepted, not yet seen by libmicrohttpd */
	unsigned open;	   /* connections libmicrohttpd holds */
	unsigned admitted; /* of those, within SOFT_LIMIT */
	bool stopping;
};

/* libmicrohttpd's connection notification: admission at the start. */
static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct hs_http_server *srv = cls;
	struct hs_http_conn *conn = *ctx;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd = MHD_get_connection_info(
			c, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *addr = MHD_get_connection_info(
			c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		conn = calloc(1, sizeof(*conn));
		pthread_mutex_lock(&srv->lock);
		if (srv->pending)
			srv->pending--;
		srv->open++;
		if (conn && srv->admitted < SOFT_LIMIT) {
			conn->admitted = true;
			srv->admitted++;
		}
		pthread_mutex_unlock(&srv->lock);
		/* without memory the connection is answered 503 (http.c) */
		if (conn && addr && addr->client_addr &&
		    addr->client_addr->sa_family == AF_UNIX) {
			conn->is_unix = true;
			conn->peer_err = fd ? hs_http__unix_peer(fd->connect_fd,
								 &conn->peer)
					    : -EBADF;
		}
		*ctx = conn;
		return;
	}
	pthread_mutex_lock(&srv->lock);
	srv->open--;
	if (conn && conn->admitted)
		srv->admitted--;
	pthread_cond_signal(&srv->freed);
	pthread_mutex_unlock(&srv->lock);
	free(conn);
	*ctx = NULL;
}

static void *accept_loop(void *arg)
{
	struct hs_http_server *srv = arg;
	struct pollfd p[HS_DAEMON_MAX_LISTEN + 1];

	for (size_t i = 0; i < srv->n; i++)
		p[i] = (struct pollfd){.fd = srv->fds[i], .events = POLLIN};
	p[srv->n] = (struct pollfd){.fd = srv->wake[0], .events = POLLIN};
	for (;;) {
		bool stop;

		/* At the hard limit, leave new connections in the backlog. */
		pthread_mutex_lock(&srv->lock);
		while (!srv->stopping &&
		       srv->open + srv->pending >= HARD_LIMIT) {
			/* timed: a connection libmicrohttpd dropped before
			 * its notification would stay pending forever
			 * (the condition variable's clock: CLOCK_REALTIME) */
			uint64_t until = hs_wall_ns() + HS_NS_PER_S;
			struct timespec ts = {
				.tv_sec = (time_t)(until / HS_NS_PER_S),
				.tv_nsec = (long)(until % HS_NS_PER_S),
			};

			if (pthread_cond_timedwait(&srv->freed, &srv->lock,
						   &ts) == ETIMEDOUT &&
			    srv->pending)
				srv->pending--;
		}
		stop = srv->stopping;
		pthread_mutex_unlock(&srv->lock);
		if (stop)
			break;
		if (poll(p, srv->n + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[srv->n].revents)
			break;
		for (size_t i = 0; i < srv->n; i++) {
			struct sockaddr_storage addr;
			socklen_t len = sizeof(addr);
			int fd;

			if (!(p[i].revents & POLLIN))
				continue;
			fd = accept4(srv->fds[i], (struct sockaddr *)&addr,
				     &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0) {
				/* out of descriptors or memory: the
				 * connection waits in the backlog */
				if (errno == EMFILE || errno == ENFILE ||
				    errno == ENOBUFS || errno == ENOMEM) {
					struct timespec ts = {0, 50000000};

					nanosleep(&ts, NULL);
				}
				continue;
			}
			pthread_mutex_lock(&srv->lock);
			srv->pending++;
			pthread_mutex_unlock(&srv->lock);
			/* on failure libmicrohttpd has closed fd */
			if (MHD_add_connection(srv->mhd, fd,
					       (struct sockaddr *)&addr,
					       len) != MHD_YES) {
				pthread_mutex_lock(&srv->lock);
				if (srv->pending)
					srv->pending--;
				pthread_mutex_unlock(&srv->lock);
			}
		}
	}
	return NULL;
}

static int open_tcp(const struct hs_listen *l)
{
	int one = 1, fd, err;

	fd = socket(l->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&l->addr, l->len) ||
	    listen(fd, SOMAXCONN)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* A unix socket at the path: a stale socket there (nobody listening) is
 * replaced; anything else is left alone and refused. */
static int open_unix(const struct hs_listen *l, struct stat *made)
{
	const struct sockaddr_un *a = (const struct sockaddr_un *)&l->addr;
	char dir[sizeof(a->sun_path)];
	struct stat st;
	mode_t old;
	int fd, err;

	if (!lstat(a->sun_path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			fprintf(stderr,
				"heapscope daemon: cannot listen on %s: the "
				"path exists and is not a socket\n",
				l->text);
			return -EEXIST;
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 &&
		    !connect(fd, (const struct sockaddr *)a, l->len)) {
			close(fd);
			fprintf(stderr,
				"heapscope daemon: cannot listen on %s: "
				"another server is listening there\n",
				l->text);
			return -EADDRINUSE;
		}
		if (fd >= 0)
			close(fd);
		unlink(a->sun_path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Mode 0666 from the start (no chmod of a path someone could swap
	 * for a symlink): every user may connect, SO_PEERCRED decides what
	 * they read.  umask is per process: only the main thread runs yet
	 * (libmicrohttpd starts after this). */
	old = umask(0111);
	err = bind(fd, (const struct sockaddr *)a, l->len) ? -errno : 0;
	umask(old);
	if (!err && listen(fd, SOMAXCONN))
		err = -errno;
	if (!err && lstat(a->sun_path, made))
		err = -errno;
	if (err) {
		close(fd);
		fprintf(stderr, "heapscope daemon: cannot listen on %s: %s\n",
			l->text, strerror(-err));
		return err;
	}
	snprintf(dir, sizeof(dir), "%s", a->sun_path);
	if (!stat(dirname(dir), &st) && !(st.st_mode & S_IXOTH))
		fprintf(stderr,
			"heapscope daemon: warning: %s is not searchable by "
			"other users (mode %04o): only its owner and root can "
			"reach %s\n",
			dir, (unsigned)(st.st_mode & 07777), l->text);
	return fd;
}

/* Remove the unix sockets made here that are still ours. */
static void remove_sockets(struct hs_http_server *srv)
{
	for (size_t i = 0; i < srv->n; i++) {
		const struct hs_listen *l = &srv->d->listen[i];
		const char *path =
			((const struct sockaddr_un *)&l->addr)->sun_path;
		struct stat st;

		if (l->addr.ss_family != AF_UNIX || !srv->made[i].ino)
			continue;
		if (!lstat(path, &st) && S_ISSOCK(st.st_mode) &&
		    st.st_dev == srv->made[i].dev &&
		    st.st_ino == srv->made[i].ino)
			unlink(path);
	}
}

void hs_http__stop(void *h)
{
	struct hs_http_server *srv = h;

	if (!srv)
		return;
	if (srv->thread_started) {
		pthread_mutex_lock(&srv->lock);
		srv->stopping = true;
		pthread_cond_broadcast(&srv->freed);
		pthread_mutex_unlock(&srv->lock);
		if (write(srv->wake[1], "x", 1) < 0) {
			/* the pipe is empty and open: cannot fail */
		}
		pthread_join(srv->thread, NULL);
	}
	/* closes every connection (each notified: srv stays until here) */
	if (srv->mhd)
		MHD_stop_daemon(srv->mhd);
	for (size_t i = 0; i < srv->n; i++)
		if (srv->fds[i] >= 0)
			close(srv->fds[i]);
	remove_sockets(srv);
	if (srv->wake[0] >= 0)
		close(srv->wake[0]);
	if (srv->wake[1] >= 0)
		close(srv->wake[1]);
	pthread_cond_destroy(&srv->freed);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}

int hs_http__start(struct hs_daemon *d, void **out)
{
	struct hs_http_server *srv = calloc(1, sizeof(*srv));
	int err = 0;

	if (!srv)
		return -ENOMEM;
	srv->d = d;
	srv->wake[0] = srv->wake[1] = -1;
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->freed, NULL);
	for (size_t i = 0; i < d->nlisten; i++, srv->n++) {
		const struct hs_listen *l = &d->listen[i];
		struct stat made;
		int fd;

		if (l->addr.ss_family == AF_UNIX) {
			fd = open_unix(l, &made);
			if (fd >= 0) {
				srv->made[i].dev = made.st_dev;
				srv->made[i].ino = made.st_ino;
			}
		} else {
			fd = open_tcp(l);
			if (fd < 0)
				fprintf(stderr,
					"heapscope daemon: cannot listen on "
					"%s: %s\n",
					l->text, strerror(-fd));
		}
		srv->fds[i] = fd;
		if (fd < 0) {
			err = fd;
			srv->n++;
			goto fail;
		}
	}
	if (pipe2(srv->wake, O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	srv->mhd = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD |
			MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
			MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC,
		0, NULL, NULL, hs_http__handle, d, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)MHD_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)IDLE_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)CONN_MEMORY, MHD_OPTION_NOTIFY_CONNECTION,
		on_connection, srv, MHD_OPTION_URI_LOG_CALLBACK,
		hs_http__uri_log, NULL, MHD_OPTION_END);
	if (!srv->mhd) {
		err = errno ? -errno : -EINVAL;
		fprintf(stderr, "heapscope daemon: cannot start the HTTP "
				"server (libmicrohttpd)\n");
		goto fail;
	}
	err = -pthread_create(&srv->thread, NULL, accept_loop, srv);
	if (err) {
		fprintf(stderr,
			"heapscope daemon: cannot start the accept thread: "
			"%s\n",
			strerror(-err));
		goto fail;
	}
	srv->thread_started = true;
	*out = srv;
	return 0;

fail:
	hs_http__stop(srv);
	return err;
}
