// SPDX-License-Identifier: MIT
/*
 * daemon_signals.c - the daemon's signals and what SIGHUP asks for:
 * SIGINT/SIGTERM stop it, SIGHUP dumps every followed process's heap
 * profile to --dump-dir.  The handlers only set flags; the main thread
 * acts on them between ring-buffer batches.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "daemon.h"

static volatile sig_atomic_t exiting, dump_requested;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		dump_requested = 1;
	else
		exiting = 1;
}

void hs_daemon__signals(struct hs_daemon *d)
{
	struct sigaction sa = {.sa_handler = on_signal};

	d->exiting = &exiting;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

bool hs_daemon__dump_requested(void)
{
	if (!dump_requested)
		return false;
	dump_requested = 0;
	return true;
}

void hs_daemon__dump_all(struct hs_daemon *d)
{
	if (!d->dump_dir) {
		fprintf(stderr, "heapscope daemon: SIGHUP ignored (no "
				"--dump-dir)\n");
		return;
	}
	/* before the walk: the events may end processes */
	hs_daemon__drain(d);
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

			err = hs_daemon__snapshot(d, p, NULL, hs_wall_ns(),
						  &snap);
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
