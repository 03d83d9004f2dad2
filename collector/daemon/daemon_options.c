// SPDX-License-Identifier: MIT
/*
 * daemon_options.c - the `heapscope daemon` command line: its help text,
 * --listen (IPv4, [IPv6], loopback unless --allow-remote), the default
 * --lib, and the checks made before anything is opened.
 */
#include <errno.h>
#include <getopt.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"

static const char usage[] =
	"Usage: heapscope daemon [--lib PATH]... [--listen ADDR:PORT]\n"
	"                        [--provider auto|heapscope|otel_memory|ddheap]\n"
	"                        [--allow-remote] [--no-copies] [--dump-dir DIR]\n"
	"                        [-v]\n"
	"\n"
	"Profile the heap of every process that uses libheapscope (or any\n"
	"object given with --lib), including processes started later and\n"
	"processes in containers, and serve the profiles over HTTP.\n"
	"\n"
	"  --lib PATH          object with the probes: libheapscope.so, a\n"
	"                      binary linking it statically, or another\n"
	"                      allocator that fires otel_memory or ddheap\n"
	"                      probes (repeatable; default: the first\n"
	"                      libheapscope.so found in /usr/local/lib,\n"
	"                      /usr/lib/x86_64-linux-gnu, /usr/lib, /lib)\n"
	"  --provider P        which probes to read in each --lib: auto\n"
	"                      (default: heapscope's if the object has them,\n"
	"                      else otel_memory's, else ddheap's),\n"
	"                      heapscope, otel_memory or ddheap.  The\n"
	"                      compatible probes have no registry: a process's\n"
	"                      profile holds only what it allocated after the\n"
	"                      attach, and stacks need frame pointers\n"
	"  --listen ADDR:PORT  HTTP address (default 127.0.0.1:6060; IPv6 as\n"
	"                      [::1]:PORT)\n"
	"  --allow-remote      permit a non-loopback --listen address; the\n"
	"                      endpoints have NO authentication: anyone who\n"
	"                      can connect reads every profiled process's\n"
	"                      call stacks and binary paths\n"
	"  --no-copies         follow only processes that map the --lib files\n"
	"                      themselves, not other copies with the same\n"
	"                      name (by default a container's own copy is\n"
	"                      found in /proc/PID/maps and attached too)\n"
	"  --dump-dir DIR      on SIGHUP, write every process's heap profile\n"
	"                      to DIR/heap-PID-STARTTIME.pb.gz (atomically)\n"
	"  -v, --verbose       libbpf and per-process messages on stderr\n"
	"  -h, --help          this text\n"
	"\n"
	"Endpoints:\n"
	"  /debug/pprof/heap?pid=N[&format=folded|text]   live heap (pprof)\n"
	"      (comm=NAME instead of pid=N: the one process named NAME)\n"
	"  /debug/pprof/allocs?pid=N&seconds=S            allocs in a window\n"
	"  /processes                                     JSON list\n"
	"  /metrics                                       Prometheus text\n"
	"\n"
	"Examples:\n"
	"  heapscope daemon --lib /usr/local/lib/libheapscope.so\n"
	"  go tool pprof -top "
	"'http://127.0.0.1:6060/debug/pprof/heap?pid=1234'\n"
	"  kill -HUP $(pidof heapscope)   # with --dump-dir\n";

static int parse_listen(struct hs_daemon *d, const char *s)
{
	char host[64];
	const char *colon;
	char *end;
	long port;

	if (!s || strlen(s) >= sizeof(d->listen_text))
		return -EINVAL;
	snprintf(d->listen_text, sizeof(d->listen_text), "%s", s);
	colon = strrchr(s, ':');
	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(host))
		return -EINVAL;
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || *end || port < 0 || port > 65535)
		return -EINVAL;
	memcpy(host, s, colon - s);
	host[colon - s] = '\0';
	memset(&d->listen_addr, 0, sizeof(d->listen_addr));
	if (host[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&d->listen_addr;
		size_t hl = strlen(host);

		if (hl < 3 || host[hl - 1] != ']')
			return -EINVAL;
		host[hl - 1] = '\0';
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
			return -EINVAL;
		d->listen_len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&d->listen_addr;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (!strcmp(host, "localhost"))
			strcpy(host, "127.0.0.1");
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		d->listen_len = sizeof(*a);
	}
	return 0;
}

static bool listen_is_loopback(const struct hs_daemon *d)
{
	if (d->listen_addr.ss_family == AF_INET) {
		const struct sockaddr_in *a =
			(const struct sockaddr_in *)&d->listen_addr;

		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	return IN6_IS_ADDR_LOOPBACK(
		&((const struct sockaddr_in6 *)&d->listen_addr)->sin6_addr);
}

static const char *default_lib(void)
{
	static const char *const dirs[] = {"/usr/local/lib",
					   "/usr/lib/x86_64-linux-gnu",
					   "/usr/lib", "/lib"};
	static char found[PATH_MAX];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(found, sizeof(found), "%s/libheapscope.so", dirs[i]);
		if (!access(found, R_OK))
			return found;
	}
	return NULL;
}

int hs_daemon__parse_args(int argc, char **argv, struct hs_daemon *d)
{
	enum {
		OPT_LIB = 256,
		OPT_LISTEN,
		OPT_REMOTE,
		OPT_DUMP,
		OPT_NOCOPIES,
		OPT_PROVIDER,
	};
	static const struct option longopts[] = {
		{"lib", required_argument, NULL, OPT_LIB},
		{"listen", required_argument, NULL, OPT_LISTEN},
		{"allow-remote", no_argument, NULL, OPT_REMOTE},
		{"dump-dir", required_argument, NULL, OPT_DUMP},
		{"no-copies", no_argument, NULL, OPT_NOCOPIES},
		{"provider", required_argument, NULL, OPT_PROVIDER},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool listen_set = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_LIB:
			if (d->nlibs == HS_DAEMON_MAX_LIBS) {
				fprintf(stderr, "heapscope daemon: at most %d "
						"--lib\n",
					HS_DAEMON_MAX_LIBS);
				return -EINVAL;
			}
			d->libs[d->nlibs++] = optarg;
			break;
		case OPT_LISTEN:
			if (parse_listen(d, optarg)) {
				fprintf(stderr,
					"heapscope daemon: invalid --listen "
					"'%s' (ADDR:PORT, e.g. "
					"127.0.0.1:6060 or [::1]:6060)\n",
					optarg);
				return -EINVAL;
			}
			listen_set = true;
			break;
		case OPT_REMOTE:
			d->allow_remote = true;
			break;
		case OPT_NOCOPIES:
			d->no_copies = true;
			break;
		case OPT_DUMP:
			d->dump_dir = optarg;
			break;
		case OPT_PROVIDER:
			if (hs_parse_provider(optarg, &d->provider)) {
				fprintf(stderr,
					"heapscope daemon: invalid --provider "
					"'%s' (auto, heapscope, otel_memory or "
					"ddheap)\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'v':
			d->verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			fputs("(try 'heapscope daemon --help')\n", stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "heapscope daemon: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (!listen_set)
		parse_listen(d, "127.0.0.1:6060");
	if (!listen_is_loopback(d) && !d->allow_remote) {
		fprintf(stderr,
			"heapscope daemon: --listen %s is not a loopback "
			"address; the endpoints have no authentication, so "
			"this needs --allow-remote (see docs/collector.md, "
			"Security)\n",
			d->listen_text);
		return -EINVAL;
	}
	if (!d->nlibs) {
		const char *lib = default_lib();

		if (!lib) {
			fprintf(stderr,
				"heapscope daemon: no libheapscope.so in the "
				"standard library directories; pass --lib "
				"PATH\n");
			return -EINVAL;
		}
		d->libs[d->nlibs++] = lib;
	}
	for (size_t i = 0; i < d->nlibs; i++) {
		if (access(d->libs[i], R_OK)) {
			fprintf(stderr, "heapscope daemon: cannot read --lib "
					"%s: %s\n",
				d->libs[i], strerror(errno));
			return -ENOENT;
		}
	}
	if (d->dump_dir) {
		struct stat st;

		if (stat(d->dump_dir, &st) || !S_ISDIR(st.st_mode) ||
		    access(d->dump_dir, W_OK)) {
			fprintf(stderr,
				"heapscope daemon: --dump-dir %s is not a "
				"writable directory\n",
				d->dump_dir);
			return -ENOTDIR;
		}
	}
	return 0;
}
