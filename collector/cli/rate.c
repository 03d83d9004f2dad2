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
#include <getopt.h>
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
	"libheapscope.so to BYTES (K/M/G suffixes; 0 or 'off' turns\n"
	"sampling off).  The process applies it at its next sampling slow\n"
	"path; with --wait, wait up to SEC seconds for the registry to show\n"
	"the new period.\n"
	"\n"
	"  -p, --pid PID     process to steer\n"
	"      --lib PATH    object with the registry (as for record)\n"
	"      --wait SEC    wait for the change to be applied (default 0)\n"
	"  -h, --help        this text\n"
	"\n"
	"Examples:\n"
	"  heapscope rate -p 1234 64K\n"
	"  heapscope rate -p 1234 --wait 5 1M\n"
	"  heapscope rate -p 1234 off\n";

static int parse_bytes(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!strcmp(s, "off") || !strcmp(s, "0")) {
		*out = -1;
		return 0;
	}
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
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"lib", required_argument, NULL, 'L'},
		{"wait", required_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct heapscope_registry h;
	struct hs_target t;
	const char *lib = NULL;
	int64_t period;
	long pid = 0, wait_s = 0;
	uint64_t addr;
	struct iovec local, remote;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid = strtol(optarg, NULL, 10);
			break;
		case 'L':
			lib = optarg;
			break;
		case 'w':
			wait_s = strtol(optarg, NULL, 10);
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (pid <= 0 || pid > INT32_MAX || optind != argc - 1 ||
	    wait_s < 0 || wait_s > 3600 ||
	    parse_bytes(argv[optind], &period)) {
		fprintf(stderr, "heapscope rate: need -p PID and one BYTES "
				"value (e.g. 512K, 1M, off)\n");
		fputs(usage, stderr);
		return 2;
	}
	err = hs_target__find(&t, (pid_t)pid, lib);
	if (err) {
		if (err == -ENOENT)
			fprintf(stderr,
				"heapscope rate: process %ld maps no "
				"libheapscope (preload it, or pass --lib)\n",
				pid);
		else
			fprintf(stderr,
				"heapscope rate: cannot inspect process %ld: "
				"%s (needs root or CAP_SYS_PTRACE)\n",
				pid, strerror(-err));
		return 1;
	}
	err = hs_registry__locate(&t, &addr);
	if (!err)
		err = hs_registry__read_header((pid_t)pid, addr, &h);
	if (err) {
		fprintf(stderr,
			"heapscope rate: cannot read the registry of %ld: %s "
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
		fprintf(stderr, "heapscope rate: cannot write to %ld: %s\n",
			pid, strerror(errno));
		return 1;
	}
	fprintf(stderr,
		"heapscope rate: pid %ld: period %lld -> requested %lld "
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
