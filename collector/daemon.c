// SPDX-License-Identifier: MIT
/*
 * daemon.c - `heapscope daemon`: system-wide heap profiling.
 *
 * The USDT programs are attached by object path for every process (pid
 * -1), so processes started later are covered without a per-process
 * command; processes already running are found by scanning /proc/PID/maps
 * and their samples taken before the attach are read from their registry.
 * Per-process state (struct hs_proc) is created at the first sight of a
 * pid, identified by pid + start time (a reused pid is a new process),
 * dropped on the exit event (or a sweep that finds the pid gone or
 * reused) and on exec (the next event of the new image starts afresh).
 *
 * Threads: the main thread consumes the BPF ring buffer, sweeps and dumps;
 * libmicrohttpd runs one thread per HTTP connection (http.c).  Everything
 * shared sits behind one mutex, taken by the main thread per ring-buffer
 * batch (never while it waits for events) and by a handler while it copies
 * a process's aggregated stacks; symbolizing them happens outside it,
 * under the process's own symbol lock (proctable.c).
 *
 * main reads as phases: parse, check, open, load, attach, scan, serve,
 * loop, clean up.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "heapscope.skel.h"
#include "heapscope_event.h"
#include "daemon.h"

static volatile sig_atomic_t exiting, dump_requested;

#define RESCAN_MS 10000 /* /proc rescan for copies not attached yet */

static const char usage[] =
	"Usage: heapscope daemon [--lib PATH]... [--listen ADDR:PORT]\n"
	"                        [--allow-remote] [--no-copies] [--dump-dir DIR]\n"
	"                        [-v]\n"
	"\n"
	"Profile the heap of every process that uses libheapscope (or any\n"
	"object given with --lib), including processes started later and\n"
	"processes in containers, and serve the profiles over HTTP.\n"
	"\n"
	"  --lib PATH          object with the heapscope probes: the shared\n"
	"                      library, or a binary linking it statically\n"
	"                      (repeatable; default: the first\n"
	"                      libheapscope.so found in /usr/local/lib,\n"
	"                      /usr/lib/x86_64-linux-gnu, /usr/lib, /lib)\n"
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

static bool verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	(void)level;
	return verbose ? vfprintf(stderr, fmt, args) : 0;
}

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		dump_requested = 1;
	else
		exiting = 1;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ options */

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

static int parse_args(int argc, char **argv, struct hs_daemon *d)
{
	enum { OPT_LIB = 256, OPT_LISTEN, OPT_REMOTE, OPT_DUMP, OPT_NOCOPIES };
	static const struct option longopts[] = {
		{"lib", required_argument, NULL, OPT_LIB},
		{"listen", required_argument, NULL, OPT_LISTEN},
		{"allow-remote", no_argument, NULL, OPT_REMOTE},
		{"dump-dir", required_argument, NULL, OPT_DUMP},
		{"no-copies", no_argument, NULL, OPT_NOCOPIES},
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

/* ------------------------------------------------------------ events */

static void window_add(struct hs_proc *p, const struct hs_event *e)
{
	struct hs_sample s;

	hs_sample__from_event(&s, e);
	for (struct hs_scrape_window *w = p->windows; w; w = w->next)
		hs_profile__alloc(w->prof, &s);
}

/* Events handled per hold of the daemon lock: under a sustained stream
 * ring_buffer__consume would otherwise never return, and HTTP handlers
 * (/metrics) would wait for the lock indefinitely. */
#define EVENT_BATCH 4096
static unsigned batch_left;

static int on_event_one(struct hs_daemon *d, void *data, size_t size);

static int on_event(void *ctx, void *data, size_t size)
{
	on_event_one(ctx, data, size);
	/* libbpf has consumed this record already: a negative return only
	 * ends the batch. */
	return --batch_left ? 0 : -EAGAIN;
}

static int on_event_one(struct hs_daemon *d, void *data, size_t size)
{
	const struct hs_event *e = data;
	struct hs_proc *p;

	if (size < sizeof(*e) || e->magic != HS_EVENT_MAGIC ||
	    e->version != HS_EVENT_VERSION || e->size != sizeof(*e) ||
	    e->depth > HS_EVENT_MAX_FRAMES || !e->pid ||
	    e->pid > INT32_MAX) {
		d->bad++;
		return 0;
	}
	p = hs_daemon__find(d, (pid_t)e->pid);
	if (e->type == HS_EV_EXIT || e->type == HS_EV_EXEC) {
		/* After exec the image is new: the next event starts a
		 * fresh entry (registry, maps, symbols). */
		if (p)
			hs_daemon__forget(d, p);
		return 0;
	}
	if (!p) {
		p = hs_daemon__follow(d, (pid_t)e->pid, NULL);
		if (!p)
			return 0;
	}
	if (e->type == HS_EV_ALLOC) {
		d->allocs++;
		hs_symref__check(p->sym, (const uint64_t *)e->stack, e->depth);
		if (p->windows)
			window_add(p, e);
	} else if (e->type == HS_EV_FREE) {
		d->frees++;
	}
	return hs_events__handle(&p->ev, data, size);
}

static void read_lost(struct hs_daemon *d, struct heapscope_bpf *skel)
{
	int ncpu = libbpf_num_possible_cpus(),
	    fd = bpf_map__fd(skel->maps.lost);
	uint64_t *vals;

	if (ncpu <= 0)
		return;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return;
	for (uint32_t k = 0; k < HS_LOST_NR && k < 4; k++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum += vals[c];
		d->lost[k] = sum;
	}
	free(vals);
}

/* ------------------------------------------------------------ dumps */

/* SIGHUP: every process's heap profile to --dump-dir, atomically. */
static void dump_all(struct hs_daemon *d)
{
	if (!d->dump_dir) {
		fprintf(stderr, "heapscope daemon: SIGHUP ignored (no "
				"--dump-dir)\n");
		return;
	}
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++) {
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next) {
			char path[PATH_MAX];
			uint8_t *buf = NULL;
			size_t len = 0;
			int err;

			if (p->gone)
				continue;
			snprintf(path, sizeof(path), "%s/heap-%d-%llu.pb.gz",
				 d->dump_dir, p->pid,
				 (unsigned long long)p->start_time);
			struct hs_snapshot snap;

			err = hs_daemon__snapshot(d, p, NULL, wall_ns(), &snap);
			if (!err)
				err = hs_daemon__render(&snap, HS_FORMAT_PPROF,
							&buf, &len);
			hs_daemon__release(d, &snap);
			if (!err)
				err = hs_write_file_atomic(path, buf, len);
			free(buf);
			if (err) {
				d->dump_errors++;
				fprintf(stderr,
					"heapscope daemon: dump of pid %d to "
					"%s failed: %s\n",
					p->pid, path, strerror(-err));
			} else {
				d->dumps++;
			}
		}
	}
	fprintf(stderr, "heapscope daemon: dumped %zu processes to %s\n",
		d->nprocs, d->dump_dir);
}

/* ------------------------------------------------------------ main */

/*
 * Attach the USDT programs for every process (pid -1) to the object at
 * path, once per inode: uprobes live on the inode, so a container's own
 * copy of the library (reached through /proc/PID/root) needs its own.
 */
int hs_daemon__attach_object(struct hs_daemon *d, const char *path)
{
	struct heapscope_bpf *skel = d->skel;
	struct bpf_program *progs[] = {skel->progs.handle_sample_free,
				       skel->progs.handle_sample_alloc,
				       skel->progs.handle_rate_change};
	const char *names[] = {"sample_free", "sample_alloc", "rate_change"};
	struct stat st;
	size_t first = d->nlinks;

	if (stat(path, &st))
		return -errno;
	for (size_t i = 0; i < d->nobjs; i++)
		if (d->objs[i].dev == st.st_dev && d->objs[i].ino == st.st_ino)
			return 0;
	if (d->nobjs == HS_DAEMON_MAX_OBJS)
		return -ENOSPC;
	for (size_t i = 0; i < 3; i++) {
		struct bpf_link *link = bpf_program__attach_usdt(
			progs[i], -1, path, HEAPSCOPE_PROVIDER, names[i], NULL);

		if (!link) {
			int err = -errno;

			fprintf(stderr,
				"heapscope daemon: cannot attach to %s:%s in "
				"%s: %s (is it built with the heapscope "
				"probes?)\n",
				HEAPSCOPE_PROVIDER, names[i], path,
				strerror(-err));
			while (d->nlinks > first)
				bpf_link__destroy(d->links[--d->nlinks]);
			return err;
		}
		d->links[d->nlinks++] = link;
	}
	d->objs[d->nobjs].dev = st.st_dev;
	d->objs[d->nobjs++].ino = st.st_ino;
	if (d->verbose)
		fprintf(stderr, "heapscope daemon: attached to %s\n", path);
	return 0;
}

static int attach_all(struct hs_daemon *d, struct heapscope_bpf *skel)
{
	for (size_t l = 0; l < d->nlibs; l++) {
		int err = hs_daemon__attach_object(d, d->libs[l]);

		if (err)
			return err;
	}
	skel->links.handle_exit = bpf_program__attach(skel->progs.handle_exit);
	skel->links.handle_exec = bpf_program__attach(skel->progs.handle_exec);
	if (!skel->links.handle_exit || !skel->links.handle_exec)
		fprintf(stderr, "heapscope daemon: warning: no exit/exec "
				"tracepoints; exits are seen by sweeps\n");
	return 0;
}

int hs_daemon_main(int argc, char **argv)
{
	static struct hs_daemon d;
	struct sigaction sa = {.sa_handler = on_signal};
	struct heapscope_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	void *http = NULL;
	uint64_t last_sweep = 0, last_scan = mono_ms();
	int err, epfd;

	/* Parse, check. */
	err = parse_args(argc, argv, &d);
	if (err)
		return err > 0 ? 0 : 2;
	verbose = d.verbose;
	d.exiting = &exiting;
	libbpf_set_print(libbpf_print);
	if (geteuid() != 0) {
		fprintf(stderr, "heapscope daemon: must run as root (BPF, "
				"USDT attach and process_vm_readv need "
				"CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE)\n");
		return 1;
	}
	pthread_mutex_init(&d.lock, NULL);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* Open, load. */
	skel = heapscope_bpf__open();
	if (!skel) {
		fprintf(stderr, "heapscope daemon: cannot open the BPF "
				"object: %s\n",
			strerror(errno));
		return 1;
	}
	skel->rodata->trace_all_exits = 0;
	err = heapscope_bpf__load(skel);
	if (err) {
		fprintf(stderr,
			"heapscope daemon: cannot load the BPF programs: %s "
			"(run with -v for the verifier log)\n",
			strerror(-err));
		goto cleanup;
	}
	d.skel = skel;
	d.tracked_fd = bpf_map__fd(skel->maps.tracked_pids);
	d.lost_pid_fd = bpf_map__fd(skel->maps.lost_by_pid);
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, &d,
			      NULL);
	if (!rb) {
		err = -errno;
		fprintf(stderr, "heapscope daemon: cannot create the ring "
				"buffer\n");
		goto cleanup;
	}

	/* Attach (every process), then scan the running ones: a sample is
	 * in the registry, in the ring buffer, or both (deduplicated). */
	err = attach_all(&d, skel);
	if (err)
		goto cleanup;
	pthread_mutex_lock(&d.lock);
	hs_daemon__scan(&d);
	pthread_mutex_unlock(&d.lock);

	/* Serve. */
	err = hs_http__start(&d, &http);
	if (err) {
		fprintf(stderr, "heapscope daemon: cannot listen on %s: %s\n",
			d.listen_text, strerror(-err));
		goto cleanup;
	}
	fprintf(stderr,
		"heapscope daemon: listening on http://%s, %zu processes "
		"already running\n",
		d.listen_text, d.nprocs);

	/* Loop: wait for events without the lock, consume with it. */
	epfd = ring_buffer__epoll_fd(rb);
	while (!exiting) {
		struct epoll_event evs[1];
		int n = epoll_wait(epfd, evs, 1, 200);

		if (n < 0 && errno != EINTR) {
			err = -errno;
			fprintf(stderr, "heapscope daemon: epoll: %s\n",
				strerror(errno));
			break;
		}
		pthread_mutex_lock(&d.lock);
		batch_left = EVENT_BATCH;
		ring_buffer__consume(rb);
		if (mono_ms() - last_sweep >= 1000) {
			read_lost(&d, skel);
			hs_daemon__sweep(&d);
			last_sweep = mono_ms();
		}
		/* New processes mapping an object not attached yet (another
		 * copy) fire no events: find them by a slow rescan. */
		if (mono_ms() - last_scan >= RESCAN_MS) {
			hs_daemon__scan(&d);
			last_scan = mono_ms();
		}
		if (dump_requested) {
			dump_requested = 0;
			read_lost(&d, skel);
			dump_all(&d);
		}
		pthread_mutex_unlock(&d.lock);
	}
	fprintf(stderr, "heapscope daemon: shutting down (%llu events, %zu "
			"processes followed)\n",
		(unsigned long long)(d.allocs + d.frees), d.nprocs);
	err = 0;

cleanup:
	hs_http__stop(http);
	for (size_t i = 0; i < d.nlinks; i++)
		bpf_link__destroy(d.links[i]);
	ring_buffer__free(rb);
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++)
		while (d.buckets[b])
			hs_daemon__forget(&d, d.buckets[b]);
	heapscope_bpf__destroy(skel);
	return err ? 1 : 0;
}
