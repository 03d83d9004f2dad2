// SPDX-License-Identifier: MIT
/*
 * frag_target.c - a workload that fragments, for the fragmentation
 * profile (test_fragmentation.sh).  Run preloaded with libheapscope.so at
 * a small sampling period (4 KiB).
 *
 *   fill_site:  128 Ki objects of 256 B (32 MiB), every 32nd from
 *   pin_site:   instead: 4 Ki long-lived objects, one in every span;
 *               then every fill object is freed: the spans stay, pinned.
 *   churn_site: a ring of 8 Ki 256-byte objects replaced continuously for
 *               ~1.5 s: short-lived objects that come and go in the free
 *               slots of the pinned spans.
 *   big_site:   16 live objects of 64 KiB, all sampled at 4 KiB: above
 *               the default HEAPSCOPE_PROXY_MAX (4096) they hold no proxy
 *               and must not appear in the profile (samples 0), unless
 *               HEAPSCOPE_PROXY_MAX >= 65536.
 * Truth: without pin_site's objects those spans would be empty; the
 * allocator's central free lists hold the unused bytes (central_free_bytes).
 * Then the in-process fragmentation profile is summed per site (proxy
 * method and age-weighted) and printed:
 *   truth central_free_bytes N
 *   site pin_site|churn_site|big_site|other proxy BYTES age BYTES samples N
 * and "ready PID"; the process sleeps until killed (collector check).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "heapscope/heapscope.h"

#pragma weak heapscope_fragmentation_profile
#pragma weak heapscope_get_allocator_stats

#define OBJ 256
#define NFILL (128 * 1024)
#define PIN_EVERY 32
#define NCHURN (8 * 1024)
#define MAXENT 65536
#define BIG (64 * 1024)
#define NBIG 16

static void *fill[NFILL], *pins[NFILL / PIN_EVERY], *ring[NCHURN], *big[NBIG];
static struct heapscope_fragmentation_entry ent[MAXENT];

__attribute__((noinline)) void *fill_site(void)
{
	return malloc(OBJ);
}

__attribute__((noinline)) void *pin_site(void)
{
	return malloc(OBJ);
}

__attribute__((noinline)) void *churn_site(void)
{
	return malloc(OBJ);
}

__attribute__((noinline)) void *big_site(void)
{
	return malloc(BIG);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *site_of(const struct heapscope_fragmentation_entry *e)
{
	Dl_info di;

	for (uint32_t i = 0; i < e->depth && i < 4; i++) {
		if (!dladdr((void *)(uintptr_t)(e->stack[i] - 1), &di) ||
		    !di.dli_sname)
			continue;
		if (!strcmp(di.dli_sname, "pin_site") ||
		    !strcmp(di.dli_sname, "churn_site") ||
		    !strcmp(di.dli_sname, "big_site") ||
		    !strcmp(di.dli_sname, "fill_site"))
			return di.dli_sname;
	}
	return "other";
}

int main(void)
{
	struct heapscope_allocator_stats st;
	double proxy[4] = {0}, age[4] = {0}, t_end;
	const char *names[4] = {"pin_site", "churn_site", "big_site", "other"};
	unsigned long samples[4] = {0};
	size_t n = 0, np = 0;
	int err;

	if (!heapscope_fragmentation_profile || !heapscope_get_allocator_stats) {
		fprintf(stderr, "SKIP: not running on libheapscope.so\n");
		return 77;
	}
	for (int i = 0; i < NFILL; i++) {
		if (i % PIN_EVERY == PIN_EVERY / 2)
			fill[i] = NULL, pins[np++] = pin_site();
		else
			fill[i] = fill_site();
		if (fill[i])
			memset(fill[i], 1, OBJ);
	}
	for (int i = 0; i < NFILL; i++)
		free(fill[i]);
	for (int i = 0; i < NCHURN; i++)
		ring[i] = churn_site();
	t_end = now_s() + 1.5;
	for (unsigned k = 0; now_s() < t_end; k++) {
		unsigned i = k % NCHURN;

		free(ring[i]);
		ring[i] = churn_site();
		memset(ring[i], 2, OBJ);
		if (i == 0)
			usleep(5000);
	}
	for (int i = 0; i < NBIG; i++) {
		big[i] = big_site();
		if (big[i])
			memset(big[i], 3, BIG);
	}
	heapscope_get_allocator_stats(&st, sizeof(st));
	err = heapscope_fragmentation_profile(ent, MAXENT, &n);
	if (err) {
		fprintf(stderr, "heapscope_fragmentation_profile: %d\n", err);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		const char *s = site_of(&ent[i]);
		int k = !strcmp(s, "pin_site")	 ? 0 :
			!strcmp(s, "churn_site") ? 1 :
			!strcmp(s, "big_site")	 ? 2 :
						   3;

		proxy[k] += ent[i].frag_bytes;
		age[k] += ent[i].frag_age_bytes;
		samples[k]++;
	}
	printf("truth central_free_bytes %llu\n",
	       (unsigned long long)st.central_free_bytes);
	for (int k = 0; k < 4; k++)
		printf("site %s proxy %.0f age %.0f samples %lu\n", names[k],
		       proxy[k], age[k], samples[k]);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
