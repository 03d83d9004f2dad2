// SPDX-License-Identifier: MIT
/*
 * allocator/api/profile_api.c - the in-process profile API of heapscope.h:
 * heap profile snapshots and HEAPSCOPE_PROFILE_AT_EXIT.
 *
 * These functions are called by the application (or at exit), never from
 * inside malloc.  Snapshot arrays come straight from mmap, so taking a
 * profile neither perturbs the heap it describes nor allocates while the
 * region lock is held.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/options.h"
#include "sampling/profile.h"

#define MAX_PATH 4096

HS_EXPORT int heapscope_heap_profile(struct heapscope_profile **out)
{
	uint64_t live = 0;
	struct heapscope_sampling_stats st;

	if (!out)
		return -EINVAL;
	heapscope_get_sampling_stats(&st, sizeof(st));
	live = st.live;
	for (int tries = 0; tries < 16; tries++) {
		size_t cap = (size_t)live + (size_t)live / 8 + 64, n;
		struct heapscope_profile *p =
			hs_profile_new(HEAPSCOPE_PROFILE_HEAP, cap);

		if (!p)
			return -ENOMEM;
		n = hs_sampled_snapshot(p->samples, cap, &live);
		if (n == (size_t)-1) { /* grew meanwhile: retry bigger */
			heapscope_profile_free(p);
			continue;
		}
		p->count = n;
		p->period = heapscope_get_sample_period();
		p->start_ns = p->end_ns = hs_clock_ns();
		hs_profile_sum(p);
		*out = p;
		return 0;
	}
	return -ENOMEM;
}

HS_EXPORT int heapscope_heap_iterate(int (*fn)(const struct heapscope_sample *,
					       void *),
				     void *arg)
{
	struct heapscope_profile *p;
	int r;

	if (!fn)
		return -EINVAL;
	r = heapscope_heap_profile(&p);
	if (r)
		return r;
	for (size_t i = 0; i < p->count && r == 0; i++)
		r = fn(&p->samples[i], arg);
	heapscope_profile_free(p);
	return r;
}

HS_EXPORT int heapscope_heap_profile_write(int fd, int fmt)
{
	struct heapscope_profile *p;
	int r = heapscope_heap_profile(&p);

	if (r)
		return r;
	r = heapscope_profile_write(p, fd, fmt);
	heapscope_profile_free(p);
	return r;
}

HS_EXPORT void heapscope_profile_free(struct heapscope_profile *p)
{
	hs_profile_free(p);
}

/* ---- sessions (sampling/session.c) ---- */

HS_EXPORT heapscope_session_t heapscope_allocs_start(size_t max_samples)
{
	return hs_session_start(HEAPSCOPE_PROFILE_ALLOCS, max_samples);
}

HS_EXPORT int heapscope_allocs_stop(heapscope_session_t h,
				    struct heapscope_profile **out)
{
	return hs_session_stop(h, HEAPSCOPE_PROFILE_ALLOCS, out);
}

HS_EXPORT heapscope_session_t heapscope_lifetime_start(size_t max_samples)
{
	return hs_session_start(HEAPSCOPE_PROFILE_LIFETIME, max_samples);
}

HS_EXPORT int heapscope_lifetime_stop(heapscope_session_t h,
				      struct heapscope_profile **out)
{
	return hs_session_stop(h, HEAPSCOPE_PROFILE_LIFETIME, out);
}

/* ---- HEAPSCOPE_PROFILE_AT_EXIT=PATH ---- */

static char at_exit_path[MAX_PATH];
static pid_t at_exit_pid; /* a forked child that exit()s writes nothing */

static void write_at_exit(void)
{
	size_t len = strlen(at_exit_path);
	int fmt = HEAPSCOPE_FORMAT_FOLDED, fd, r;

	if (!len || getpid() != at_exit_pid)
		return;
	if (len > 6 && strcmp(at_exit_path + len - 6, ".pb.gz") == 0)
		fmt = HEAPSCOPE_FORMAT_PPROF;
	fd = open(at_exit_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		hs_log("heapscope: HEAPSCOPE_PROFILE_AT_EXIT: cannot open %s "
		       "(errno %d)\n", at_exit_path, errno);
		return;
	}
	r = heapscope_heap_profile_write(fd, fmt);
	if (r)
		hs_log("heapscope: HEAPSCOPE_PROFILE_AT_EXIT: writing %s "
		       "failed (%d)\n", at_exit_path, r);
	close(fd);
	at_exit_path[0] = 0; /* once, even if both paths below run */
}

/*
 * The path is read in a constructor (environ is final then) and the
 * profile written by a destructor: a preloaded or linked libheapscope is
 * finalised after the program's own destructors and atexit handlers, so
 * the profile shows the heap as the program left it.  exit() and a return
 * from main both run it; _exit() and fatal signals do not.
 */
__attribute__((constructor)) static void at_exit_init(void)
{
	const char *v;
	size_t n;

	/* constructors run in no fixed order: scan now, the library
	 * constructor's scan may not have run yet (ignored in
	 * secure-execution mode: options.c) */
	hs_options_init();
	v = hs_option_string(HS_SOPT_PROFILE_AT_EXIT);
	if (!v || !*v)
		return;
	n = strlen(v);
	if (n >= sizeof(at_exit_path)) {
		hs_log("heapscope: HEAPSCOPE_PROFILE_AT_EXIT: path too long, "
		       "ignored\n");
		return;
	}
	memcpy(at_exit_path, v, n + 1);
	at_exit_pid = getpid();
}

__attribute__((destructor)) static void at_exit_write(void)
{
	write_at_exit();
}
