// SPDX-License-Identifier: MIT
/*
 * rate.c - `heapscope rate -p PID BYTES`: change a running process's
 * sampling period from outside, by writing the registry's control_period
 * word (include/heapscope/abi.h) with process_vm_writev.  The allocator
 * applies it at a thread's next sampler slow path (within one sampling
 * interval, or 128 MiB of allocation when sampling is off) and fires
 * rate_change.  No BPF needed.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "target.h"

static const char usage[] =
	"Usage: heapscope rate -p PID [--lib PATH] [--wait SEC] BYTES\n"
	"\n"
	"Set the sampling period of a running process that uses\n"
	"libheapscope.so to BYTES (1 byte to 1 TiB, K/M/G suffixes; 0 or\n"
	"'off' turns sampling off).  The process applies it at its next\n"
	"sampling slow path; with --wait, wait up to SEC seconds for the\n"
	"registry to show the new period.\n"
	"\n"
	"  -p, --pid PID     process to steer\n"
	"      --lib PATH    object with the registry (as for record)\n"
	"      --wait SEC    wait for the change to be applied (0..3600,\n"
	"                    default 0)\n"
	"  -h, --help        this text\n"
	"\n"
	"Examples:\n"
	"  heapscope rate -p 1234 64K\n"
	"  heapscope rate -p 1234 --wait 5 1M\n"
	"  heapscope rate -p 1234 off\n";

#define MAX_WAIT_S 3600
#define STR_(x) #x
#define STR(x) STR_(x)
/* What BYTES accepts: HEAPSCOPE_SAMPLE_RATE's range (1 TiB at most). */
#define BYTES_ACCEPTS                                                          \
	"a sampling period of 1..1099511627776 bytes, with a K, M or G "      \
	"suffix up to 1024G, or 0 or off"

/* BYTES: a period in bytes (K/M/G suffixes), or 0 / off (-1: sampling
 * off).  -EINVAL when malformed or outside 1..2^40. */
static int parse_bytes(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!strcmp(s, "off") || !strcmp(s, "0")) {
		*out = -1;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	else if (*end == 'g' || *end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end || !v || v > (1ull << 40) >> shift)
		return -EINVAL;
	*out = (int64_t)(v << shift);
	return 0;
}

int hs_rate_main(int argc, char **argv)
{
	const struct hs_cli_opt opts[] = {
		{"pid", 'p', hs_cli__pid_accepts()},
		{"lib", 'L', "a path or a file-name prefix"},
		{"wait", 'w', "whole seconds, 0.." STR(MAX_WAIT_S)},
		{"help", 'h', NULL},
		{NULL, 0, NULL},
	};
	const char *cmd = "rate";
	struct heapscope_registry h;
	struct hs_target t;
	const char *lib = NULL;
	int64_t period;
	pid_t pid = 0;
	long wait_s = 0;
	uint64_t addr;
	struct iovec local, remote;
	int c, err;

	optind = 1;
	while ((c = hs_cli__next(cmd, argc, argv, opts)) != -1) {
		switch (c) {
		case 'p':
			if (hs_cli__parse_pid(cmd, "pid", optarg, &pid))
				return HS_EXIT_USAGE;
			break;
		case 'L':
			if (hs_cli__parse_lib(cmd, opts, 'L', optarg, &lib))
				return HS_EXIT_USAGE;
			break;
		case 'w':
			if (hs_cli__parse_long(optarg, 0, MAX_WAIT_S,
					       &wait_s)) {
				hs_cli__bad_value(cmd, "--wait", optarg,
						  hs_cli__accepts(opts, 'w'));
				return HS_EXIT_USAGE;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return HS_EXIT_USAGE;
		}
	}
	if (!pid) {
		hs_cli__usage_error(cmd, "-p PID is required (%s)",
				    hs_cli__pid_accepts());
		return HS_EXIT_USAGE;
	}
	if (optind == argc) {
		hs_cli__usage_error(cmd, "missing BYTES (%s)", BYTES_ACCEPTS);
		return HS_EXIT_USAGE;
	}
	if (argc - optind > 1) {
		hs_cli__usage_error(cmd,
				    "unexpected argument '%.64s' (one BYTES "
				    "value only)",
				    argv[optind + 1]);
		return HS_EXIT_USAGE;
	}
	if (parse_bytes(argv[optind], &period)) {
		hs_cli__bad_value(cmd, "BYTES", argv[optind], BYTES_ACCEPTS);
		return HS_EXIT_USAGE;
	}
	if (!hs_proc__alive(pid)) {
		fprintf(stderr,
			"heapscope rate: no process %d (it has exited, or the "
			"pid is wrong)\n",
			pid);
		return HS_EXIT_FAIL;
	}
	err = hs_target__find(&t, (pid_t)pid, lib);
	if (err) {
		if (err == -ENOENT)
			fprintf(stderr,
				"heapscope rate: process %d maps no "
				"libheapscope (preload it, or pass --lib)\n",
				pid);
		else
			fprintf(stderr,
				"heapscope rate: cannot inspect process %d: "
				"%s (needs root or CAP_SYS_PTRACE)\n",
				pid, strerror(-err));
		return 1;
	}
	err = hs_registry__locate(&t, &addr);
	if (!err)
		err = hs_registry__read_header((pid_t)pid, addr, &h);
	if (err) {
		fprintf(stderr,
			"heapscope rate: cannot read the registry of %d: %s "
			"(needs root or CAP_SYS_PTRACE)\n",
			pid, strerror(-err));
		return 1;
	}
	local = (struct iovec){&period, sizeof(period)};
	remote = (struct iovec){
		(void *)(addr +
			 offsetof(struct heapscope_registry, control_period)),
		sizeof(period)};
	if (process_vm_writev((pid_t)pid, &local, 1, &remote, 1, 0) !=
	    sizeof(period)) {
		fprintf(stderr, "heapscope rate: cannot write to %d: %s\n",
			pid, strerror(errno));
		return 1;
	}
	fprintf(stderr,
		"heapscope rate: pid %d: period %lld -> requested %lld "
		"bytes%s\n",
		pid, (long long)h.sample_period, (long long)period,
		period < 0 ? " (off)" : "");
	for (long i = 0; i < wait_s * 10; i++) {
		struct timespec ts = {0, 100000000};

		if (hs_registry__read_header((pid_t)pid, addr, &h))
			break;
		if (h.control_period == 0 &&
		    (h.sample_period == period ||
		     (period < 0 && h.sample_period <= 0))) {
			fprintf(stderr, "heapscope rate: applied\n");
			return 0;
		}
		nanosleep(&ts, NULL);
	}
	if (wait_s) {
		fprintf(stderr, "heapscope rate: not applied within %ld s (the "
				"process has not allocated since?)\n",
			wait_s);
		return 1;
	}
	return 0;
}
