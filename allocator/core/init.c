/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/init.c - start-up and process events.
 *
 *  - hs_init_global(): lazy, on the first allocation; must not malloc (it
 *    may run inside the dynamic loader's first call into malloc).
 *  - the library constructor: re-reads options now that environ is set,
 *    then calls hs_sampling_init() exactly once, then registers the fork
 *    handlers (pthread_atfork may allocate, so not from the lazy path).
 *  - fork: prepare takes the sampling side's locks first (the sampling
 *    side allocates from the core while holding its own locks), then the
 *    core's in lock order: every central list (ascending class), page
 *    heap, metadata.  parent unlocks the core in reverse order, then the
 *    sampling side; child re-initialises the core's locks, then the
 *    sampling side's.
 *  - thread exit: a pthread key destructor flushes the thread cache.
 *
 * libheapscope is meant to be preloaded or linked, so that its malloc is
 * the process's from the start.  It can also be dlopen'ed (a plugin or a
 * Python extension linking it): its initial-exec TLS is 56 bytes
 * (thread_cache.h), which fits in what glibc keeps for dlopen'ed
 * libraries (tests/tls.cmake).
 */
#include <pthread.h>

#include "base/log.h"
#include "base/options.h"
#include "base/os.h"
#include "base/stats.h"
#include "core/central_freelist.h"
#include "core/init.h"
#include "core/large.h"
#include "core/page_heap.h"
#include "core/size_class.h"
#include "core/span.h"
#include "sampling.h"

int hs_initialised;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static bool exit_key_ok;

bool hs_init_global(void)
{
	if (HS_LIKELY(__atomic_load_n(&hs_initialised, __ATOMIC_ACQUIRE)))
		return true;
	pthread_mutex_lock(&init_lock);
	if (!hs_initialised) {
		hs_options_init();
		hs_size_class_init();
		hs_large_init();
		/* pthread_key_create does not allocate */
		exit_key_ok =
			pthread_key_create(&exit_key, hs_tc_thread_exit) == 0;
		__atomic_store_n(&hs_initialised, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&init_lock);
	return true;
}

void hs_tc_register_exit(hs_tcache_t *tc)
{
	if (exit_key_ok)
		pthread_setspecific(exit_key, tc);
}

static void fork_prepare(void)
{
	hs_sampling_fork_prepare();
	pthread_mutex_lock(&init_lock);
	hs_central_lock_all();
	hs_page_heap_lock();
	hs_meta_lock();
}

static void fork_parent(void)
{
	hs_meta_unlock();
	hs_page_heap_unlock();
	hs_central_unlock_all();
	pthread_mutex_unlock(&init_lock);
	hs_sampling_fork_parent();
}

static void fork_child(void)
{
	hs_os_fork_child();
	hs_meta_reinit();
	hs_page_heap_reinit();
	hs_central_reinit();
	pthread_mutex_init(&init_lock, NULL);
	hs_sampling_fork_child();
}

/* HEAPSCOPE_VERBOSE >= 2: statistics on stderr at exit. */
__attribute__((destructor)) static void heapscope_destructor(void)
{
	if (hs_option_get(HS_OPT_VERBOSE) >= 2)
		hs_stats_print();
}

__attribute__((constructor)) static void heapscope_constructor(void)
{
	hs_init_global();
	hs_options_init(); /* environ is set by now */
	hs_sampling_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (hs_option_get(HS_OPT_VERBOSE) > 0)
		hs_log("heapscope: allocator ready, sample rate %ld",
		       (long)hs_option_get(HS_OPT_SAMPLE_RATE));
}
