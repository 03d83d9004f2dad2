// SPDX-License-Identifier: MIT
/*
 * runner: run one benchmark process and report what it cost.
 *
 * fork/exec the command with extra environment variables, measure its wall
 * time with CLOCK_MONOTONIC (fork to wait4) and its peak resident set size
 * from wait4's rusage (ru_maxrss, KiB), and print one tab-separated line:
 *
 *   <wall seconds> <maxrss KiB> <status>
 *
 * status is "ok", "exit:N", "signal:NAME" or "timeout". The runner itself
 * never loads the allocator under test: LD_PRELOAD is only set in the child.
 *
 * Usage: runner [-e NAME=VALUE]... [-u NAME]... [-i stdin_file]
 *                [-o stdout_file] [-t timeout_s] -- command [args...]
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Options of one run, filled by parse_args(). */
struct runner_opts {
	char *set_env[64]; /* NAME=VALUE given to the child */
	int n_set;
	char *unset_env[64]; /* NAME removed from the child's environment */
	int n_unset;
	const char *in_path; /* child's stdin, default /dev/null */
	const char *out_path; /* child's stdout, default /dev/null */
	double timeout_s; /* kill the child after this long; 0 = never */
	char **argv; /* the command */
};

static volatile sig_atomic_t timed_out;
static pid_t child;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
	if (child > 0)
		kill(child, SIGKILL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: runner [-e NAME=VALUE]... [-u NAME]... [-i stdin] [-o stdout]\n"
		"              [-t timeout_s] -- command [args...]\n"
		"example: runner -e LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 "
		"-- ./small_churn -t 1\n");
	exit(2);
}

static void parse_args(int argc, char **argv, struct runner_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->in_path = "/dev/null";
	o->out_path = "/dev/null";
	while ((c = getopt(argc, argv, "+e:u:i:o:t:h")) != -1) {
		switch (c) {
		case 'e':
			if (o->n_set == 64 || !strchr(optarg, '='))
				usage();
			o->set_env[o->n_set++] = optarg;
			break;
		case 'u':
			if (o->n_unset == 64)
				usage();
			o->unset_env[o->n_unset++] = optarg;
			break;
		case 'i':
			o->in_path = optarg;
			break;
		case 'o':
			o->out_path = optarg;
			break;
		case 't':
			o->timeout_s = atof(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	o->argv = argv + optind;
}

/* In the child: set up environment and stdio, then exec. Never returns. */
static void exec_child(const struct runner_opts *o)
{
	int fd;

	for (int i = 0; i < o->n_unset; i++)
		unsetenv(o->unset_env[i]);
	for (int i = 0; i < o->n_set; i++)
		putenv(o->set_env[i]);
	fd = open(o->in_path, O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0)
		_exit(126);
	fd = open(o->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || dup2(fd, 1) < 0)
		_exit(126);
	execvp(o->argv[0], o->argv);
	fprintf(stderr, "runner: exec %s: %s\n", o->argv[0], strerror(errno));
	_exit(127);
}

int main(int argc, char **argv)
{
	struct runner_opts o;
	struct rusage ru;
	struct sigaction sa;
	double t0, t1;
	int status;
	char st[64];

	parse_args(argc, argv, &o);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);

	t0 = now_s();
	child = fork();
	if (child < 0) {
		perror("runner: fork");
		return 1;
	}
	if (child == 0)
		exec_child(&o);
	if (o.timeout_s > 0) {
		struct itimerval it = { .it_value = {
						.tv_sec = (time_t)o.timeout_s,
						.tv_usec = (suseconds_t)((o.timeout_s - (time_t)o.timeout_s) * 1e6),
					} };
		setitimer(ITIMER_REAL, &it, NULL);
	}
	while (wait4(child, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("runner: wait4");
			return 1;
		}
	}
	t1 = now_s();

	if (timed_out)
		snprintf(st, sizeof(st), "timeout");
	else if (WIFSIGNALED(status))
		snprintf(st, sizeof(st), "signal:%s", sigabbrev_np(WTERMSIG(status)) ?
							     sigabbrev_np(WTERMSIG(status)) :
							     "?");
	else if (WEXITSTATUS(status) != 0)
		snprintf(st, sizeof(st), "exit:%d", WEXITSTATUS(status));
	else
		snprintf(st, sizeof(st), "ok");
	printf("%.6f\t%ld\t%s\n", t1 - t0, ru.ru_maxrss, st);
	return 0;
}
