// SPDX-License-Identifier: MIT
/*
 * http_access.c - who may read which profile.  Over a unix socket the
 * peer's uid (SO_PEERCRED) decides: root reads every process, another
 * user only the processes it owns, by the kernel's rule for ptrace by the
 * same user (all four uids its own, the process dumpable).  Over TCP the
 * bearer token of --token-file, read here and compared in constant time.
 * And which process a request names (?pid=N or ?comm=NAME among those the
 * peer may read), for every per-process endpoint.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "http.h"

int hs_http__load_token(struct hs_daemon *d, const char *path)
{
	const char *cmd = "daemon";
	char buf[HS_TOKEN_MAX + 2];
	struct stat st;
	ssize_t n;
	size_t len = 0;
	int fd;

	/* O_NONBLOCK: a FIFO must not hang the start; it is refused below */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return hs_cli__usage_error(cmd,
					   "cannot read --token-file %s: %s",
					   path, strerror(errno));
	if (fstat(fd, &st)) {
		close(fd);
		return hs_cli__usage_error(cmd,
					   "cannot stat --token-file %s: %s",
					   path, strerror(errno));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return hs_cli__usage_error(cmd,
					   "--token-file %s is not a regular "
					   "file (a file of mode 0600 holding "
					   "the token)",
					   path);
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		close(fd);
		return hs_cli__usage_error(cmd,
					   "--token-file %s has mode %04o: "
					   "group or others may read or write "
					   "it (chmod 600 it)",
					   path,
					   (unsigned)(st.st_mode & 07777));
	}
	/* one byte more than a token with "\r\n" tells "too long" */
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len && buf[len - 1] == '\n')
		len--;
	if (len && buf[len - 1] == '\r')
		len--;
	if (!len)
		return hs_cli__usage_error(cmd,
					   "--token-file %s is empty (it must "
					   "hold the token, 1..%d bytes)",
					   path, HS_TOKEN_MAX);
	if (len > HS_TOKEN_MAX)
		return hs_cli__usage_error(cmd,
					   "--token-file %s holds more than %d "
					   "bytes (a token is 1..%d bytes)",
					   path, HS_TOKEN_MAX, HS_TOKEN_MAX);
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)buf[i];

		if (ch <= ' ' || ch >= 0x7f)
			return hs_cli__usage_error(
				cmd,
				"--token-file %s: byte %zu is a space or a "
				"control or non-ASCII character (a token is "
				"printable ASCII without spaces)",
				path, i + 1);
	}
	memcpy(d->token, buf, len);
	d->token[len] = '\0';
	d->token_len = len;
	return 0;
}

bool hs_http__token_ok(const struct hs_daemon *d, const char *h)
{
	volatile unsigned char diff;
	size_t n;

	if (!h || strncasecmp(h, "Bearer ", 7))
		return false;
	for (h += 7; *h == ' '; h++)
		;
	n = strlen(h);
	/* Every byte of the token is compared, whatever the request holds:
	 * the time depends on the token's length only. */
	diff = n != d->token_len;
	for (size_t i = 0; i < d->token_len; i++)
		diff |= (unsigned char)d->token[i] ^
			(unsigned char)(i < n ? h[i] : 0);
	return !diff;
}

int hs_http__unix_peer(int fd, struct hs_http_peer *who)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return -errno;
	if (len != sizeof(cred))
		return -EPROTO;
	who->uid = cred.uid;
	who->all = cred.uid == 0;
	return 0;
}

/* All four uids of /proc/PID/status ("Uid:\treal\teffective\tsaved\tfs")
 * equal uid?  0, -EACCES, or -ESRCH. */
static int uids_are(pid_t pid, uid_t uid)
{
	char path[40], buf[4096], *p;
	unsigned long u[4];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -EACCES;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	p = strstr(buf, "\nUid:");
	if (!p ||
	    sscanf(p + 5, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) != 4)
		return -EACCES;
	for (int i = 0; i < 4; i++)
		if (u[i] != (unsigned long)uid)
			return -EACCES;
	return 0;
}

int hs_http__may_read(const struct hs_http_peer *who, pid_t pid,
		      uint64_t *start)
{
	char path[32];
	struct stat st;
	uint64_t before, after;
	int err;

	*start = 0;
	if (who->all)
		return 0;
	err = hs_proc__start_time(pid, &before);
	if (err)
		return -ESRCH;
	/* /proc/PID belongs to root while the process is not dumpable
	 * (set-uid, set-gid, capabilities, PR_SET_DUMPABLE 0), to its
	 * effective uid otherwise. */
	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st))
		return -ESRCH;
	if (st.st_uid != who->uid)
		return -EACCES;
	err = uids_are(pid, who->uid);
	if (err)
		return err;
	/* the same process throughout (not a pid reused meanwhile) */
	if (hs_proc__start_time(pid, &after) || after != before)
		return -ESRCH;
	*start = before;
	return 0;
}

bool hs_http__may_read_proc(const struct hs_http_peer *who,
			    const struct hs_proc *p)
{
	uint64_t start;

	if (who->all)
		return true;
	return !p->gone && !hs_http__may_read(who, p->pid, &start) &&
	       start == p->start_time;
}

int hs_http__target_pid(struct hs_daemon *d, struct MHD_Connection *c,
			const struct hs_http_peer *who, long *pid)
{
	const char *spid = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						       "pid"),
		   *comm = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						       "comm");
	int found = 0;

	if (spid) {
		if (strlen(spid) > 10 ||
		    hs_cli__parse_long(spid, 1, INT32_MAX, pid))
			return -EINVAL;
		return 0;
	}
	if (!comm || !*comm || strlen(comm) >= 16)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next)
			if (!p->gone && !strcmp(p->info.comm, comm) &&
			    hs_http__may_read_proc(who, p)) {
				*pid = p->pid;
				found++;
			}
	pthread_mutex_unlock(&d->lock);
	return found == 1 ? 0 : found ? -ENOTUNIQ : -ESRCH;
}

enum MHD_Result hs_http__target_error(struct hs_daemon *d,
				      struct MHD_Connection *c, int err,
				      const char *usage)
{
	if (err == -ESRCH)
		return hs_http__reply_error(
			d, c, MHD_HTTP_NOT_FOUND,
			"no followed process with that comm");
	if (err == -ENOTUNIQ)
		return hs_http__reply_error(
			d, c, MHD_HTTP_CONFLICT,
			"several processes with that comm; use pid=");
	return hs_http__reply_error(d, c, MHD_HTTP_BAD_REQUEST, usage);
}
