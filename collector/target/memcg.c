// SPDX-License-Identifier: MIT
/*
 * memcg.c - a process's memory cgroup seen from outside: where the
 * hierarchies are mounted (cgroup v1's memory controller, the unified v2
 * one), which cgroup /proc/PID/cgroup names, and how near it, or the
 * tightest of its ancestors, is to its limit (v1 memory.usage_in_bytes /
 * memory.limit_in_bytes, v2 memory.current / memory.max), and its v2
 * memory.pressure.  Every value read is checked: a path the kernel would
 * not print (relative, "..") or a number that does not parse is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target.h"

/* a limit at or above this is "no limit" (v1 prints PAGE_COUNTER_MAX
 * pages as 0x7ffffffffffff000) */
#define NO_LIMIT (1ull << 62)

/* Read a small file into buf (NUL-terminated).  0 or -errno. */
static int read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* A byte count file: a decimal number, or "max" (v2) as 0 = none. */
static int read_bytes(const char *dir, const char *name, uint64_t *v)
{
	char path[PATH_MAX + 32], buf[64], *end;
	unsigned long long x;
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	err = read_small(path, buf, sizeof(buf));
	if (err)
		return err;
	if (!strncmp(buf, "max", 3)) {
		*v = 0;
		return 0;
	}
	if (buf[0] < '0' || buf[0] > '9')
		return -EBADMSG;
	errno = 0;
	x = strtoull(buf, &end, 10);
	if (errno || (*end && *end != '\n'))
		return -EBADMSG;
	*v = x >= NO_LIMIT ? 0 : x;
	return 0;
}

void hs_memcg__mounts(struct hs_memcg_mounts *o)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	o->v1[0] = o->v2[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], mnt[PATH_MAX], *dash, fs[32], opts[512];

		/* id parent maj:min root mount opts [tags] - fs src superopts
		 */
		if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2)
			continue;
		dash = strstr(line, " - ");
		if (!dash ||
		    sscanf(dash + 3, "%31s %*s %511s", fs, opts) != 2 ||
		    strcmp(root, "/"))
			continue;
		if (!strcmp(fs, "cgroup2") && !o->v2[0])
			snprintf(o->v2, sizeof(o->v2), "%s", mnt);
		if (!strcmp(fs, "cgroup") && !o->v1[0]) {
			/* "rw,memory" or "rw,memory,..." */
			char *tok, *save;

			for (tok = strtok_r(opts, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save))
				if (!strcmp(tok, "memory"))
					snprintf(o->v1, sizeof(o->v1), "%s",
						 mnt);
		}
	}
	fclose(f);
}

/* A cgroup path as the kernel prints it: absolute, no "..". */
static bool path_ok(const char *p)
{
	return p[0] == '/' && !strstr(p, "/../") &&
	       strcmp(p + strlen(p) - (strlen(p) >= 3 ? 3 : 0), "/..");
}

int hs_memcg__parse(const struct hs_memcg_mounts *o, char *text,
		    struct hs_memcg *cg)
{
	char v1[256] = "", v2[256] = "", *line, *save;

	memset(cg, 0, sizeof(*cg));
	/* "ID:CONTROLLERS:PATH" per line; v2's is "0::PATH" */
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'),
		     *c2 = c1 ? strchr(c1 + 1, ':') : 0;
		char *tok, *s2, ctl[256];
		size_t cl;

		if (!c2 || strlen(c2 + 1) >= sizeof(v1))
			continue;
		if (c2 == c1 + 1) {
			snprintf(v2, sizeof(v2), "%s", c2 + 1);
			continue;
		}
		cl = (size_t)(c2 - c1 - 1);
		if (cl >= sizeof(ctl))
			continue;
		memcpy(ctl, c1 + 1, cl);
		ctl[cl] = '\0';
		for (tok = strtok_r(ctl, ",", &s2); tok;
		     tok = strtok_r(NULL, ",", &s2))
			if (!strcmp(tok, "memory"))
				snprintf(v1, sizeof(v1), "%s", c2 + 1);
	}
	if (v1[0] && o->v1[0]) {
		cg->version = 1;
		snprintf(cg->path, sizeof(cg->path), "%s", v1);
	} else if (v2[0] && o->v2[0]) {
		cg->version = 2;
		snprintf(cg->path, sizeof(cg->path), "%s", v2);
	} else {
		return -ENOENT;
	}
	if (!path_ok(cg->path)) {
		cg->version = 0;
		return -EBADMSG;
	}
	if (snprintf(cg->dir, sizeof(cg->dir), "%s%s",
		     cg->version == 1 ? o->v1 : o->v2,
		     strcmp(cg->path, "/") ? cg->path : "") >=
	    (int)sizeof(cg->dir)) {
		cg->version = 0;
		return -ENAMETOOLONG;
	}
	return 0;
}

int hs_memcg__of(const struct hs_memcg_mounts *o, pid_t pid,
		 struct hs_memcg *cg)
{
	char path[40], buf[8192];
	int err;

	memset(cg, 0, sizeof(*cg));
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	err = read_small(path, buf, sizeof(buf));
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	return hs_memcg__parse(o, buf, cg);
}

int hs_memcg__usage(const struct hs_memcg *cg, uint64_t *usage, uint64_t *limit)
{
	const char *uname = cg->version == 1 ? "memory.usage_in_bytes"
					     : "memory.current",
		   *lname = cg->version == 1 ? "memory.limit_in_bytes"
					     : "memory.max";
	size_t root_len = strlen(cg->dir) - strlen(cg->path);
	char dir[PATH_MAX];
	double best = -1;
	int err = 0;

	*usage = *limit = 0;
	if (!cg->version)
		return -ENOENT;
	snprintf(dir, sizeof(dir), "%s", cg->dir);
	/* from the cgroup up to (not including) the hierarchy's root,
	 * which has no limit file in v2 and no enforced limit in v1 */
	for (int level = 0; strlen(dir) > root_len && level < 64; level++) {
		uint64_t u, l;
		char *slash;

		err = read_bytes(dir, uname, &u);
		if (!err)
			err = read_bytes(dir, lname, &l);
		if (err) {
			if (!level)
				return err; /* the process's own: gone */
			break;
		}
		if (l && (double)u / (double)l > best) {
			best = (double)u / (double)l;
			*usage = u;
			*limit = l;
		}
		if (!level && !*limit)
			*usage = u;
		slash = strrchr(dir, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	return 0;
}

int hs_memcg__peak(const struct hs_memcg *cg, uint64_t *peak)
{
	*peak = 0;
	if (!cg->version)
		return -ENOENT;
	return read_bytes(cg->dir,
			  cg->version == 1 ? "memory.max_usage_in_bytes"
					   : "memory.peak",
			  peak);
}

int hs_memcg__pressure(const struct hs_memcg *cg, double *avg10)
{
	char path[PATH_MAX + 32], buf[256];
	int err;

	if (cg->version != 2)
		return -ENOTSUP;
	snprintf(path, sizeof(path), "%s/memory.pressure", cg->dir);
	err = read_small(path, buf, sizeof(buf));
	if (err)
		return err;
	if (sscanf(buf, "some avg10=%lf", avg10) != 1 || !(*avg10 >= 0) ||
	    *avg10 > 100)
		return -EBADMSG;
	return 0;
}
