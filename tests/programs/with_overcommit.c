/* SPDX-License-Identifier: MIT */
/*
 * tests/programs/with_overcommit.c - run one command with
 * vm.overcommit_memory set to MODE, and put the old value back as soon as
 * it exits (tests/test_sizes.sh, root only).
 *
 *   with_overcommit MODE cmd [args...]
 *
 * The setting is host-wide: under strict overcommit (2) with the host's
 * CommitLimit nearly used, fork, exec and every new mapping fail, the
 * test script's own shell included (a first version of test_sizes.sh
 * could neither fork `cat` to restore the value nor `sleep` in its
 * watchdog, and left the host in strict mode).  So the switch lives here:
 * the child is started with posix_spawn (vfork: no copy of this
 * process's memory to charge), and the restore is one write(2), also
 * from SIGTERM / SIGINT / SIGHUP handlers (the signal is passed on to the
 * child).  The window is the command's run time only.  If this program is
 * killed outright, the caller restores (test_sizes.sh, with shell
 * builtins only).
 *
 * Exit status: the command's (128 + signal if it was killed); 125 when
 * the setting cannot be changed, 126 when the command cannot be started.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define KNOB "/proc/sys/vm/overcommit_memory"

extern char **environ;

static char old_mode[16];
static size_t old_len;
static volatile sig_atomic_t child;

static int write_mode(const char *m, size_t n)
{
	int fd = open(KNOB, O_WRONLY);
	if (fd < 0)
		return -1;
	ssize_t w = write(fd, m, n);
	close(fd);
	return w == (ssize_t)n ? 0 : -1;
}

static void on_signal(int sig)
{
	write_mode(old_mode, old_len);
	if (child > 0)
		kill(child, sig);
}

int main(int argc, char **argv)
{
	if (argc < 3 || strlen(argv[1]) != 1) {
		fprintf(stderr, "usage: with_overcommit MODE cmd [args...]\n");
		return 125;
	}
	int fd = open(KNOB, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, old_mode, sizeof(old_mode) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		perror("with_overcommit: read " KNOB);
		return 125;
	}
	old_len = (size_t)n;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (write_mode(argv[1], 1)) {
		perror("with_overcommit: write " KNOB);
		return 125;
	}
	pid_t pid;
	int err = posix_spawn(&pid, argv[2], NULL, NULL, argv + 2, environ);
	int st = 0;
	if (!err) {
		child = pid;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	int restored = write_mode(old_mode, old_len);
	if (err) {
		fprintf(stderr, "with_overcommit: cannot start %s: %s\n", argv[2],
			strerror(err));
		return 126;
	}
	if (restored) {
		perror("with_overcommit: restore " KNOB);
		return 125;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
