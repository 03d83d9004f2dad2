// SPDX-License-Identifier: MIT
/*
 * output.c - the collector's one way of writing a profile: the bytes go
 * to a temporary file next to the destination (mkstemp), fsync, mode
 * 0644, then replace the destination (rename) or, without --force, are
 * linked in only where nothing exists (link).  A reader never sees half a
 * profile, a device or FIFO at the destination is never replaced, and a
 * symlink there is never followed.  Path NULL or "-" is stdout.  Used by
 * `record -o` (and its check before attaching) and the daemon's dumps.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"

bool hs_output_force = true;

int hs_output__check(const char *path)
{
	char tmp[PATH_MAX];
	struct stat st;
	int fd;

	if (!path || !strcmp(path, "-"))
		return 0;
	if (!lstat(path, &st) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return -EINVAL; /* /dev/null, a FIFO: not replaceable */
	if (!hs_output_force && !lstat(path, &st))
		return -EEXIST;
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	close(fd);
	unlink(tmp);
	return 0;
}

int hs_install_output(const char *tmp, const char *path)
{
	struct stat st;
	int err = 0;

	/* a device, FIFO or socket at path (-o /dev/null) must never be
	 * replaced by a regular file, forced or not */
	if (!lstat(path, &st) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		err = -EINVAL;
	else if (hs_output_force) {
		if (rename(tmp, path))
			err = -errno;
	} else if (link(tmp, path)) {
		/* link() fails with EEXIST on any existing name, a symlink
		 * (dangling or not) included: no clobbering, no following */
		err = -errno;
	}
	unlink(tmp);
	return err;
}

int hs_write_file_atomic(const char *path, const void *buf, size_t len)
{
	char tmp[PATH_MAX];
	const char *p = buf;
	int fd, err = 0;

	if (!path || !strcmp(path, "-")) {
		while (len) {
			ssize_t n = write(STDOUT_FILENO, p, len);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return -EIO;
			p += n;
			len -= n;
		}
		return 0;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	while (len && !err) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			err = n < 0 ? -errno : -EIO;
		else {
			p += n;
			len -= n;
		}
	}
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && fchmodat(AT_FDCWD, tmp, 0644, 0))
		err = -errno;
	if (!err)
		return hs_install_output(tmp, path);
	if (err)
		unlink(tmp);
	return err;
}
