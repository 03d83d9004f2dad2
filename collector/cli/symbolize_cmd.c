// SPDX-License-Identifier: MIT
/*
 * symbolize_cmd.c - `heapscope symbolize [--force] IN OUT`: name the
 * functions of a pprof profile recorded with --symbolize=none, offline
 * (symbolize/symbolize_offline.c does the work).  IN and OUT may be "-"
 * (stdin, stdout); OUT is written atomically and, like record's output,
 * not over an existing file without --force.  No BPF, no root needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "export.h"
#include "pprof_decode.h"
#include "symbolize.h"

static const char usage[] =
	"Usage: heapscope symbolize [--force] IN OUT\n"
	"\n"
	"Symbolize the pprof profile IN (as written by record or the daemon\n"
	"with --symbolize=none: addresses and mappings with build ids) and\n"
	"write it to OUT with function names, source lines and inlined\n"
	"calls.  Each mapping's object is found by its build id: the file\n"
	"the mapping names if it is still the same build, then\n"
	"/usr/lib/debug/.build-id/, then the debuginfod servers in\n"
	"DEBUGINFOD_URLS.  IN or OUT '-': stdin or stdout.\n"
	"\n"
	"  -f, --force   replace OUT if it exists\n"
	"  -h, --help    this text\n"
	"\n"
	"Examples:\n"
	"  heapscope record -p 1234 -d 10 --format pprof --symbolize=none -o "
	"raw.pb.gz\n"
	"  heapscope symbolize raw.pb.gz heap.pb.gz\n"
	"  DEBUGINFOD_URLS=https://debuginfod.example.org heapscope symbolize "
	"raw.pb.gz -\n";

/* The whole of path ("-": stdin), at most PPROF_DECODE_MAX bytes. */
static int read_all(const char *path, uint8_t **out, size_t *len)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf;
	ssize_t r;

	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		if (fd)
			close(fd);
		return -ENOMEM;
	}
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap) {
			uint8_t *nb;

			if (cap >= PPROF_DECODE_MAX) {
				r = -1;
				errno = EFBIG;
				break;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				r = -1;
				errno = ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (r < 0) {
		int err = -errno;

		if (fd)
			close(fd);
		free(buf);
		return err;
	}
	if (fd)
		close(fd);
	*out = buf;
	*len = n;
	return 0;
}

int hs_symbolize_main(int argc, char **argv)
{
	const struct hs_cli_opt opts[] = {
		{"force", 'f', NULL},
		{"help", 'h', NULL},
		{NULL, 0, NULL},
	};
	const char *cmd = "symbolize", *in, *outp;
	struct hs_symbolize_stats st;
	uint8_t *buf = NULL, *out = NULL;
	size_t len = 0, olen = 0;
	int c, err;

	hs_output_force = false;
	optind = 1;
	while ((c = hs_cli__next(cmd, argc, argv, opts)) != -1) {
		switch (c) {
		case 'f':
			hs_output_force = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return HS_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		hs_cli__usage_error(cmd,
				    "needs two operands, IN and OUT (%d "
				    "given)",
				    argc - optind);
		return HS_EXIT_USAGE;
	}
	in = argv[optind];
	outp = argv[optind + 1];
	err = hs_output__check(outp);
	if (err) {
		fprintf(stderr, "heapscope symbolize: cannot write %s: %s%s\n",
			outp, strerror(-err),
			err == -EEXIST ? " (--force replaces it)" : "");
		return HS_EXIT_FAIL;
	}
	err = read_all(in, &buf, &len);
	if (err) {
		fprintf(stderr, "heapscope symbolize: cannot read %s: %s\n", in,
			strerror(-err));
		return HS_EXIT_FAIL;
	}
	err = hs_symbolize_pprof(buf, len, &out, &olen, &st);
	free(buf);
	if (err) {
		fprintf(stderr, "heapscope symbolize: %s: %s\n", in,
			err == -EINVAL	? "not a valid pprof profile"
			: err == -E2BIG ? "more sample types than heapscope "
					  "handles (16)"
					: strerror(-err));
		return HS_EXIT_FAIL;
	}
	err = hs_write_file_atomic(outp, out, olen);
	free(out);
	if (err) {
		fprintf(stderr, "heapscope symbolize: cannot write %s: %s\n",
			outp, strerror(-err));
		return HS_EXIT_FAIL;
	}
	fprintf(stderr,
		"heapscope symbolize: %zu of %zu mappings found by build id, "
		"%zu of %zu locations symbolized\n",
		st.mappings_found, st.mappings, st.locations_symbolized,
		st.locations);
	return 0;
}
