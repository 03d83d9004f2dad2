// SPDX-License-Identifier: MIT
/*
 * daemon_options.c - the `heapscope daemon` command line: its help text,
 * --listen (IPv4, [IPv6], loopback unless --allow-remote, unix:PATH), the
 * default --lib (the installed library), and the checks made before
 * anything is opened.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "daemon.h"
#include "http.h"

static const char usage[] =
	"Usage: heapscope daemon [--lib PATH]... [--listen ADDR:PORT|unix:PATH]...\n"
	"                        [--token-file FILE] [--allow-remote]\n"
	"                        [--provider auto|heapscope|otel_memory|ddheap]\n"
	"                        [--no-copies] [--dump-dir DIR] [-v]\n"
	"                        [--oom-threshold F] [--oom-cooldown S]\n"
	"                        [--oom-keep N] [--leak-interval SECONDS]\n"
	"                        [--symbolize local|none]\n"
	"\n"
	"Profile the heap of every process that uses libheapscope (or any\n"
	"object given with --lib), including processes started later and\n"
	"processes in containers, and serve the profiles over HTTP.\n"
	"\n"
	"  --lib PATH          object with the probes: libheapscope.so, a\n"
	"                      binary linking it statically, or another\n"
	"                      allocator that fires otel_memory or ddheap\n"
	"                      probes (repeatable, up to 16; default: the\n"
	"                      installed library\n"
	"                      " HS_INSTALLED_LIB ",\n"
	"                      or the build tree's library when run from\n"
	"                      the build tree)\n"
	"  --provider P        which probes to read in each --lib: auto\n"
	"                      (default: heapscope's if the object has them,\n"
	"                      else otel_memory's, else ddheap's),\n"
	"                      heapscope, otel_memory or ddheap.  The\n"
	"                      compatible probes have no registry: a process's\n"
	"                      profile holds only what it allocated after the\n"
	"                      attach, and stacks need frame pointers\n"
	"  --listen ADDR:PORT  HTTP address (default 127.0.0.1:6060; IPv6 as\n"
	"                      [::1]:PORT); repeatable, up to 4\n"
	"  --listen unix:PATH  a unix socket (mode 0666) whose peers are\n"
	"                      checked by uid: root reads every process,\n"
	"                      another user only its own\n"
	"  --token-file FILE   TCP requests must carry 'Authorization: Bearer\n"
	"                      TOKEN', TOKEN the contents of FILE (mode 0600\n"
	"                      or stricter)\n"
	"  --allow-remote      permit a non-loopback --listen address; without\n"
	"                      --token-file anyone who can connect reads every\n"
	"                      profiled process's call stacks and binary paths\n"
	"  --no-copies         follow only processes that map the --lib files\n"
	"                      themselves, not other copies with the same\n"
	"                      name, whatever its .so version suffix (by\n"
	"                      default a container's own copy is found in\n"
	"                      /proc/PID/maps and attached too)\n"
	"  --dump-dir DIR      on SIGHUP, write every process's heap profile\n"
	"                      to DIR/heap-PID-STARTTIME.pb.gz (atomically);\n"
	"                      each pre-OOM snapshot to\n"
	"                      DIR/oom-PID-STARTTIME-ID-REASON.pb.gz\n"
	"  --oom-threshold F   snapshot a process whose memory cgroup (or\n"
	"                      an ancestor) uses F of its limit or more\n"
	"                      (0 < F <= 1, default 0.8; 0: no pressure\n"
	"                      watch); under PSI memory pressure too, and\n"
	"                      keep the OOM killer's victims' snapshots\n"
	"  --oom-cooldown S    at most one snapshot per process per S\n"
	"                      seconds (default 10), OOM kills aside\n"
	"  --oom-keep N        snapshots kept, in memory and in --dump-dir\n"
	"                      (default 16, at most 1024; the oldest that is\n"
	"                      not a victim's goes first)\n"
	"  --leak-interval S   seconds between two points of the leak trends\n"
	"                      (0..3600, default 5; 0: none kept); each\n"
	"                      process keeps 720 points of at most 64 stacks\n"
	"                      (~410 KiB)\n"
	"  --symbolize S       local (default: names, lines and inlined calls\n"
	"                      from each binary's symbols and debug info, and\n"
	"                      from the debuginfod servers of DEBUGINFOD_URLS)\n"
	"                      or none (profiles keep raw addresses with exact\n"
	"                      mappings and build ids, for heapscope\n"
	"                      symbolize, pprof or Parca to symbolize later)\n"
	"  -v, --verbose       libbpf and per-process messages on stderr\n"
	"  -h, --help          this text\n"
	"\n"
	"Endpoints:\n"
	"  /debug/pprof/heap?pid=N    one process's heap (pprof; &debug=1 or\n"
	"                             &format=folded|text: text)\n"
	"      (comm=NAME instead of pid=N: the one process named NAME)\n"
	"  /debug/pprof/heap          the host profile: every followed process\n"
	"                             you may read in one profile, each sample\n"
	"                             labelled pid, comm, exe, cgroup,\n"
	"                             container_id, systemd_unit (folded and\n"
	"                             text: a root frame 'COMM (PID)')\n"
	"  /debug/pprof/allocs[?pid=N]  allocations since first followed\n"
	"      (&seconds=S, heap and allocs: the difference over S seconds;\n"
	"      allocs?pid=N&window=S: only the allocations of the next S s)\n"
	"  /debug/heapscope/rss?pid=N    where the process's RSS went (JSON;\n"
	"                             comm=NAME as for the profiles)\n"
	"  /debug/heapscope/leaks?pid=N  leak trends (JSON; comm=NAME too)\n"
	"  /debug/heapscope/oom       pre-OOM snapshots (JSON)\n"
	"  /debug/heapscope/oom/ID.pb.gz  one of them (pprof)\n"
	"  /targets                   Prometheus HTTP service discovery JSON\n"
	"  /processes                 JSON list\n"
	"  /metrics                   Prometheus text\n"
	"\n"
	"Examples:\n"
	"  heapscope daemon\n"
	"  heapscope daemon --lib /opt/app/lib/libheapscope.so.1\n"
	"  go tool pprof -top "
	"'http://127.0.0.1:6060/debug/pprof/heap?pid=1234'\n"
	"  go tool pprof -tags http://127.0.0.1:6060/debug/pprof/heap\n"
	"  heapscope daemon --listen unix:/run/heapscope/http.sock\n"
	"  curl --unix-socket /run/heapscope/http.sock http://x/processes\n"
	"  kill -HUP $(pidof heapscope)   # with --dump-dir\n";

#define LISTEN_ACCEPTS                                                         \
	"ADDR:PORT with port 0..65535, e.g. 127.0.0.1:6060 or [::1]:6060, "   \
	"or unix:/ABSOLUTE/PATH of at most 107 bytes"

/* unix:PATH into l: an absolute path that fits sun_path. */
static int parse_unix(struct hs_listen *l, const char *path)
{
	struct sockaddr_un *a = (struct sockaddr_un *)&l->addr;

	if (path[0] != '/' || strlen(path) >= sizeof(a->sun_path))
		return -EINVAL;
	memset(&l->addr, 0, sizeof(l->addr));
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	l->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
			     strlen(path) + 1);
	return 0;
}

static int parse_listen(struct hs_listen *l, const char *s)
{
	char host[64];
	const char *colon;
	char *end;
	long port;

	if (!s || strlen(s) >= sizeof(l->text))
		return -EINVAL;
	snprintf(l->text, sizeof(l->text), "%s", s);
	if (!strncmp(s, "unix:", 5))
		return parse_unix(l, s + 5);
	colon = strrchr(s, ':');
	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(host))
		return -EINVAL;
	if (colon[1] < '0' || colon[1] > '9')
		return -EINVAL;
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || *end || port < 0 || port > 65535)
		return -EINVAL;
	memcpy(host, s, colon - s);
	host[colon - s] = '\0';
	memset(&l->addr, 0, sizeof(l->addr));
	if (host[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&l->addr;
		size_t hl = strlen(host);

		if (hl < 3 || host[hl - 1] != ']')
			return -EINVAL;
		host[hl - 1] = '\0';
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
			return -EINVAL;
		l->len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&l->addr;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (!strcmp(host, "localhost"))
			strcpy(host, "127.0.0.1");
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		l->len = sizeof(*a);
	}
	return 0;
}

/* A unix socket counts as local. */
static bool listen_is_loopback(const struct hs_listen *l)
{
	if (l->addr.ss_family == AF_UNIX)
		return true;
	if (l->addr.ss_family == AF_INET) {
		const struct sockaddr_in *a =
			(const struct sockaddr_in *)&l->addr;

		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	return IN6_IS_ADDR_LOOPBACK(
		&((const struct sockaddr_in6 *)&l->addr)->sin6_addr);
}

/*
 * The library to follow without --lib: the build tree's when this is the
 * build tree's binary (HS_BUILD_EXE, HS_BUILD_LIB: cmake/install.cmake),
 * else the installed one (HS_INSTALLED_LIB, the SONAME link in the
 * install libdir).  Processes mapping the file under its real name
 * (libheapscope.so.1.0.0) or another copy of it match too (attach.c).
 */
static const char *default_lib(void)
{
	char self[PATH_MAX];

	if (realpath("/proc/self/exe", self) && !strcmp(self, HS_BUILD_EXE) &&
	    !access(HS_BUILD_LIB, R_OK))
		return HS_BUILD_LIB;
	return HS_INSTALLED_LIB;
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
		OPT_TOKEN,
		OPT_OOM_THRESHOLD, /* --oom-*: parsed by pressure.c */
		OPT_OOM_COOLDOWN,
		OPT_OOM_KEEP,
		OPT_LEAK_INTERVAL,
		OPT_SYMBOLIZE,
	};
	static const struct hs_cli_opt opts[] = {
		{"lib", OPT_LIB, "the path of an object with the probes"},
		{"listen", OPT_LISTEN, LISTEN_ACCEPTS},
		{"token-file", OPT_TOKEN,
		 "a file of mode 0600 holding the bearer token"},
		{"allow-remote", OPT_REMOTE, NULL},
		{"dump-dir", OPT_DUMP, "a writable directory"},
		{"no-copies", OPT_NOCOPIES, NULL},
		{"provider", OPT_PROVIDER,
		 "auto, heapscope, otel_memory or ddheap"},
		{"oom-threshold", OPT_OOM_THRESHOLD,
		 "a fraction of the limit, 0 < F <= 1, or 0 for no watch"},
		{"oom-cooldown", OPT_OOM_COOLDOWN, "seconds, 0..86400"},
		{"oom-keep", OPT_OOM_KEEP, "a count, 1..1024"},
		{"leak-interval", OPT_LEAK_INTERVAL, "seconds, 0..3600"},
		{"symbolize", OPT_SYMBOLIZE, "local or none"},
		{"verbose", 'v', NULL},
		{"help", 'h', NULL},
		{NULL, 0, NULL},
	};
	const char *cmd = "daemon", *token_file = NULL;
	bool tcp = false;
	long secs;
	int c;

	hs_oom__defaults(&d->oom);
	d->leak_interval_ns = HS_LEAK_INTERVAL_S * HS_NS_PER_S;
	optind = 1;
	while ((c = hs_cli__next(cmd, argc, argv, opts)) != -1) {
		switch (c) {
		case OPT_LIB:
			if (d->nlibs == HS_DAEMON_MAX_LIBS)
				return hs_cli__usage_error(
					cmd, "too many --lib (at most %d)",
					HS_DAEMON_MAX_LIBS);
			if (hs_cli__parse_lib(cmd, opts, OPT_LIB, optarg,
					      &d->libs[d->nlibs]))
				return -EINVAL;
			d->nlibs++;
			break;
		case OPT_LISTEN:
			if (d->nlisten == HS_DAEMON_MAX_LISTEN)
				return hs_cli__usage_error(
					cmd, "too many --listen (at most %d)",
					HS_DAEMON_MAX_LISTEN);
			if (parse_listen(&d->listen[d->nlisten], optarg))
				return hs_cli__bad_value(cmd, "--listen",
							 optarg,
							 LISTEN_ACCEPTS);
			d->nlisten++;
			break;
		case OPT_TOKEN:
			token_file = optarg;
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
			if (hs_parse_provider(optarg, &d->provider))
				return hs_cli__bad_value(
					cmd, "--provider", optarg,
					hs_cli__accepts(opts, OPT_PROVIDER));
			break;
		case OPT_OOM_THRESHOLD:
		case OPT_OOM_COOLDOWN:
		case OPT_OOM_KEEP: {
			/* "--oom-threshold" etc.; pressure.c parses the value */
			const char *flag = c == OPT_OOM_THRESHOLD ?
						   "--oom-threshold" :
					   c == OPT_OOM_COOLDOWN ?
						   "--oom-cooldown" :
						   "--oom-keep";

			if (hs_oom__option(&d->oom, flag + 2, optarg))
				return hs_cli__bad_value(
					cmd, flag, optarg,
					hs_cli__accepts(opts, c));
			break;
		}
		case OPT_LEAK_INTERVAL:
			if (hs_cli__parse_long(optarg, 0, 3600, &secs))
				return hs_cli__bad_value(
					cmd, "--leak-interval", optarg,
					hs_cli__accepts(opts,
							OPT_LEAK_INTERVAL));
			d->leak_interval_ns = (uint64_t)secs * HS_NS_PER_S;
			break;
		case OPT_SYMBOLIZE:
			if (hs_cli__parse_symbolize(cmd, opts, OPT_SYMBOLIZE,
						    optarg, &d->raw_symbols))
				return -EINVAL;
			break;
		case 'v':
			d->verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc)
		return hs_cli__usage_error(cmd,
					   "unexpected argument '%.64s' (daemon "
					   "takes options only)",
					   argv[optind]);
	if (!d->nlisten)
		parse_listen(&d->listen[d->nlisten++], "127.0.0.1:6060");
	for (size_t i = 0; i < d->nlisten; i++) {
		tcp |= d->listen[i].addr.ss_family != AF_UNIX;
		if (!listen_is_loopback(&d->listen[i]) && !d->allow_remote)
			return hs_cli__usage_error(
				cmd,
				"--listen %s is not a loopback address (needs "
				"--allow-remote, and --token-file to keep "
				"strangers out; docs/collector.md, SECURITY)",
				d->listen[i].text);
	}
	if (token_file && !tcp)
		return hs_cli__usage_error(cmd,
					   "--token-file guards TCP addresses, "
					   "and every --listen is a unix socket "
					   "(checked by uid instead)");
	if (token_file && hs_http__load_token(d, token_file))
		return -EINVAL;
	if (!d->nlibs) {
		const char *lib = default_lib();

		if (access(lib, R_OK)) {
			fprintf(stderr,
				"heapscope daemon: cannot read the installed "
				"library %s: %s; install it (libheapscope1) "
				"or pass --lib PATH\n",
				lib, strerror(errno));
			return -ENOENT;
		}
		d->libs[d->nlibs++] = lib;
	}
	for (size_t i = 0; i < d->nlibs; i++)
		if (access(d->libs[i], R_OK))
			return hs_cli__usage_error(cmd,
						   "cannot read --lib %s: %s "
						   "(the path of an object "
						   "with the probes)",
						   d->libs[i], strerror(errno));
	if (d->dump_dir) {
		struct stat st;

		if (stat(d->dump_dir, &st) || !S_ISDIR(st.st_mode) ||
		    access(d->dump_dir, W_OK))
			return hs_cli__usage_error(
				cmd, "--dump-dir %s is not a writable directory",
				d->dump_dir);
	}
	return 0;
}
