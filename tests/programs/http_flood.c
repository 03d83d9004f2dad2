// SPDX-License-Identifier: MIT
/*
 * http_flood.c - N HTTP clients at once against 127.0.0.1:PORT, for the
 * daemon's connection-limit test (tests/test_daemon_http_limits.sh).
 *
 *   http_flood PORT PATH N SECONDS
 *
 * Opens N connections (non-blocking, all before any reads), sends one
 * "GET PATH HTTP/1.1" on each, and reads each answer's status line and
 * headers, keeping every connection open until all have answered (so a
 * served connection holds its place, as a slow scraper does).  Prints
 *
 *   200=A 503=B 503_no_retry_after=C other=D reset=E closed=F timeout=G
 *
 * (reset: ECONNRESET or another socket error; closed: end of stream
 * before a complete status line and headers; timeout: no answer within
 * SECONDS) and exits 0 iff every connection got 200, or 503 with a
 * Retry-After header.  Exit 2 on bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

enum state { CONNECTING, SENDING, READING, DONE };
enum result {
	R_NONE,
	R_200,
	R_503,
	R_503_NO_RETRY,
	R_OTHER,
	R_RESET,
	R_CLOSED
};

struct client {
	int fd;
	enum state st;
	enum result res;
	size_t sent, got;
	char buf[2048];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The headers are complete: classify the answer. */
static enum result classify(const char *h)
{
	int code;

	if (sscanf(h, "HTTP/1.%*d %d", &code) != 1)
		return R_OTHER;
	if (code == 200)
		return R_200;
	if (code != 503)
		return R_OTHER;
	for (const char *p = strstr(h, "\r\n"); p; p = strstr(p + 2, "\r\n"))
		if (!strncasecmp(p + 2, "Retry-After:", 12))
			return R_503;
	return R_503_NO_RETRY;
}

static void finish(struct client *c, enum result r)
{
	c->res = r;
	c->st = DONE;
	/* served connections stay open until the end; others close now */
	if (r != R_200) {
		close(c->fd);
		c->fd = -1;
	}
}

static void step(struct client *c, short rev, const char *req, size_t reqlen)
{
	ssize_t n;

	if (c->st == CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err) {
			finish(c, R_RESET);
			return;
		}
		if (!(rev & POLLOUT))
			return;
		c->st = SENDING;
	}
	if (c->st == SENDING) {
		n = send(c->fd, req + c->sent, reqlen - c->sent, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			finish(c, R_RESET);
			return;
		}
		if (n > 0)
			c->sent += (size_t)n;
		if (c->sent == reqlen)
			c->st = READING;
		return;
	}
	if (c->st != READING || !(rev & (POLLIN | POLLHUP | POLLERR)))
		return;
	n = recv(c->fd, c->buf + c->got, sizeof(c->buf) - 1 - c->got, 0);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			finish(c, R_RESET);
		return;
	}
	if (n == 0) {
		finish(c, R_CLOSED);
		return;
	}
	c->got += (size_t)n;
	c->buf[c->got] = '\0';
	if (strstr(c->buf, "\r\n\r\n"))
		finish(c, classify(c->buf));
	else if (c->got == sizeof(c->buf) - 1)
		finish(c, R_OTHER);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct client *cl;
	struct pollfd *p;
	char req[512];
	size_t reqlen;
	long port, n, secs;
	unsigned count[R_CLOSED + 1] = {0}, timeout = 0, left;
	double deadline;

	if (argc != 5 || (port = atol(argv[1])) <= 0 || port > 65535 ||
	    (n = atol(argv[3])) <= 0 || n > 10000 ||
	    (secs = atol(argv[4])) <= 0 || secs > 600) {
		fprintf(stderr, "usage: http_flood PORT PATH N(1..10000) "
				"SECONDS(1..600)\n");
		return 2;
	}
	reqlen = (size_t)snprintf(req, sizeof(req),
				  "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
				  argv[2]);
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cl = calloc((size_t)n, sizeof(*cl));
	p = calloc((size_t)n, sizeof(*p));
	if (!cl || !p)
		return 1;
	for (long i = 0; i < n; i++) {
		cl[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (cl[i].fd < 0) {
			perror("socket");
			return 1;
		}
		if (connect(cl[i].fd, (struct sockaddr *)&a, sizeof(a)) &&
		    errno != EINPROGRESS)
			finish(&cl[i], R_RESET);
	}
	deadline = now() + secs;
	for (left = (unsigned)n; left && now() < deadline;) {
		long m = 0;

		for (long i = 0; i < n; i++) {
			if (cl[i].st == DONE)
				continue;
			p[m].fd = cl[i].fd;
			p[m].events = cl[i].st == READING ? POLLIN : POLLOUT;
			p[m].revents = 0;
			m++;
		}
		if (poll(p, (nfds_t)m, 100) < 0 && errno != EINTR)
			break;
		m = 0;
		left = 0;
		for (long i = 0; i < n; i++) {
			if (cl[i].st == DONE)
				continue;
			step(&cl[i], p[m++].revents, req, reqlen);
			left += cl[i].st != DONE;
		}
	}
	for (long i = 0; i < n; i++) {
		if (cl[i].st == DONE)
			count[cl[i].res]++;
		else
			timeout++;
		if (cl[i].fd >= 0)
			close(cl[i].fd);
	}
	printf("200=%u 503=%u 503_no_retry_after=%u other=%u reset=%u "
	       "closed=%u timeout=%u\n",
	       count[R_200], count[R_503], count[R_503_NO_RETRY],
	       count[R_OTHER], count[R_RESET], count[R_CLOSED], timeout);
	return count[R_200] + count[R_503] == (unsigned)n ? 0 : 1;
}
