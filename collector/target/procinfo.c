// SPDX-License-Identifier: MIT
/*
 * procinfo.c - what the collector reports about a process besides its
 * heap: comm, binary, cgroup v2 path, pid in its own namespace (NSpid),
 * start time (pid + start time identify a process across pid reuse);
 * whether it is alive.
 * Everything read from /proc is bounded and validated.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target.h"

static int read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

bool hs_proc__alive(pid_t pid)
{
	/* EPERM: it exists (another user's) */
	return !(kill(pid, 0) && errno == ESRCH);
}

int hs_proc__start_time(pid_t pid, uint64_t *start)
{
	char path[64], buf[1024], *p;
	unsigned long long st;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	err = read_small(path, buf, sizeof(buf));
	if (err)
		return err;
	/* comm may hold spaces and ')': fields resume after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
			 "%*d %*d %*d %*d %*d %*d %llu",
			 &st) != 1)
		return -EBADMSG;
	*start = st;
	return 0;
}

int hs_proc__info(pid_t pid, struct hs_proc_info *pi)
{
	char path[64], buf[4096], *p;
	ssize_t n;
	int err;

	memset(pi, 0, sizeof(*pi));
	pi->pid = pi->nspid = pid;
	err = hs_proc__start_time(pid, &pi->start_time);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if (!read_small(path, pi->comm, sizeof(pi->comm)))
		pi->comm[strcspn(pi->comm, "\n")] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, pi->binary, sizeof(pi->binary) - 1);
	pi->binary[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	if (!read_small(path, buf, sizeof(buf))) {
		/* cgroup v2: the "0::PATH" line. */
		p = strstr(buf, "0::");
		if (p && (p == buf || p[-1] == '\n'))
			snprintf(pi->cgroup, sizeof(pi->cgroup), "%.*s",
				 (int)strcspn(p + 3, "\n"), p + 3);
	}
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!read_small(path, buf, sizeof(buf))) {
		/* NSpid: outermost first; the last is the innermost view. */
		p = strstr(buf, "\nNSpid:");
		if (p) {
			char *line = p + 7, *end = strchr(line, '\n'), *tok;
			long v;

			if (end)
				*end = '\0';
			for (tok = strtok(line, " \t"); tok;
			     tok = strtok(NULL, " \t")) {
				v = strtol(tok, NULL, 10);
				if (v > 0 && v <= INT32_MAX)
					pi->nspid = (pid_t)v;
			}
		}
	}
	return 0;
}

/* A 64-character lower-case hex string of exactly len bytes at s? */
static bool is_container_id(const char *s, size_t len)
{
	if (len != HS_CONTAINER_ID_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

void hs_proc__cgroup_ids(const char *cgroup, char id[HS_CONTAINER_ID_LEN + 1],
			 char *unit, size_t unit_size)
{
	/* runtime prefixes of a systemd scope: "<prefix><id>.scope" */
	static const char *const prefixes[] = {
		"docker-", "cri-containerd-", "crio-", "libpod-", "",
	};
	const char *seg = cgroup;

	id[0] = '\0';
	if (unit_size)
		unit[0] = '\0';
	while (seg && *seg) {
		size_t len;

		while (*seg == '/')
			seg++;
		len = strcspn(seg, "/");
		if (!len)
			break;
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes);
		     i++) {
			size_t pl = strlen(prefixes[i]), il;

			if (len < pl || strncmp(seg, prefixes[i], pl))
				continue;
			il = len - pl;
			if (il > 6 && !memcmp(seg + len - 6, ".scope", 6))
				il -= 6;
			if (is_container_id(seg + pl, il)) {
				memcpy(id, seg + pl, il);
				id[il] = '\0';
				break;
			}
		}
		if (len > 8 && !memcmp(seg + len - 8, ".service", 8) &&
		    unit_size) {
			if (len < unit_size)
				snprintf(unit, unit_size, "%.*s", (int)len,
					 seg);
			else
				unit[0] = '\0';
		}
		seg += len;
	}
}
