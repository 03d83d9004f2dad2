// SPDX-License-Identifier: MIT
/*
 * allocator/sampled.c - the sampled path: the dedicated sampled region,
 * records, probes, statistics and the in-process API (heapscope.h).
 *
 * The region is reserved once (256 GiB of address space, PROT_NONE,
 * MADV_NOHUGEPAGE on the whole of it) and made writable front to back as
 * it is used (sampled_pages.c), so it is at most two VMAs, strict
 * overcommit charges only what was used, and the kernel refuses a sample
 * it could not back; free recognises a sampled pointer with one compare
 * (hs_is_sampled).
 * Every sampled allocation owns whole 8 KiB pages (sampled_pages.c) and
 * starts at its first page; small ones (allocated size up to
 * HEAPSCOPE_PROXY_MAX, default 4096) also hold a proxy object in the
 * normal heap until they are freed.  Freed pages stay committed in a
 * bounded cache (sampled_pages.c) and are reused first.
 *
 * The region also holds the large unsampled blocks (hs_region_alloc,
 * above HS_MAX_SMALL_SIZE and up to HEAPSCOPE_REGION_BLOCK_MAX, default
 * 64 MiB): their runs carry PLAIN_SLOT instead of a registry slot and
 * fire no probe.  Large blocks,
 * sampled or not, then draw on one pool of pages: with a separate page
 * heap for the unsampled ones, the pages each pool kept free could not
 * serve the other, and at the default period (where most blocks of a few
 * MiB are sampled) a program's large blocks took up to 1.2x the page
 * faults and RSS of sampling off.  A large block can change between
 * sampled and unsampled on realloc without moving.
 *
 * Locking: one mutex serialises the page runs, the registry writers and
 * the statistics.  Unwinding, proxies and the sample_alloc probe happen
 * outside it; sample_free fires inside it, before the pages can be
 * handed out again.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "heapscope/abi.h"
#include "heapscope/heapscope.h"
#include "internal.h"
#include "probes.h"
#include "profile.h"
#include "registry.h"
#include "sampled.h"
#include "sampler.h"
#include "sampling.h"
#include "stats.h"
#include "hs_unwind.h"

#define REGION_MAX ((size_t)256 << 30)
#define REGION_MIN ((size_t)1 << 30)
#define REGION_ALIGN ((size_t)1 << 30) /* = largest supported alignment */
#define REGISTRY_CAPACITY ((uint64_t)4 << 20)
_Static_assert(REGISTRY_CAPACITY <= HEAPSCOPE_REGISTRY_MAX_CAPACITY,
	       "collectors read every slot the registry reserves");
#define MAX_INVALID_REPORTS 8
/* Distinct call sites of mismatched sized frees reported on stderr. */
#define MISMATCH_SITES 64
/* Page runs of large unsampled blocks carry this tag instead of a
 * registry slot (slots are below REGISTRY_CAPACITY). */
#define PLAIN_SLOT (HS_PAGES_NONE - 1)

HS_EXPORT volatile unsigned short heapscope_sample_alloc_semaphore
	__attribute__((section(".probes")));
HS_EXPORT volatile unsigned short heapscope_sample_free_semaphore
	__attribute__((section(".probes")));
HS_EXPORT volatile unsigned short heapscope_rate_change_semaphore
	__attribute__((section(".probes")));
HS_EXPORT volatile unsigned short heapscope_mismatched_free_semaphore
	__attribute__((section(".probes")));

uintptr_t hs_sampled_start;
uintptr_t hs_sampled_size;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int sampling_ready; /* hs_sampling_init has run (atomic) */
static struct heapscope_sampling_stats stats; /* fields: atomics */

#define STAT_ADD(f, v) __atomic_fetch_add(&stats.f, (uint64_t)(v), __ATOMIC_RELAXED)
#define STAT_SUB(f, v) __atomic_fetch_sub(&stats.f, (uint64_t)(v), __ATOMIC_RELAXED)

/* Counted in units of whole pages, rounded as the region does. */
static inline uint64_t est(uint64_t w, uint64_t x, uint64_t r)
{
	return (uint64_t)((unsigned __int128)w * x / ((unsigned __int128)r + 1));
}

/* A block of the region counted as a large allocation (bytes) enters
 * (sign 1) or leaves (-1) the heap's figures; mallinfo2 and
 * heapscope_get_stats add them to the page heap's large spans. */
static void count_region_block(int64_t bytes, int sign)
{
	hs_stat_add(HS_STAT_region_large_bytes, sign * bytes);
	hs_stat_add(HS_STAT_region_large_count, sign);
}

static void account(const struct heapscope_record *rec, int sign)
{
	/* The heap's own figures (mallinfo2, heapscope_get_stats) count a
	 * sample as the block it is: one with a proxy already is, through
	 * the proxy (a block of its size class); one without, as a large
	 * allocation in the region.  (Without this, a program whose big
	 * blocks were all sampled showed none of them in mallinfo2.) */
	if (!rec->proxy)
		count_region_block((int64_t)rec->allocated, sign);
	uint64_t inuse = est(rec->weight, rec->allocated, rec->requested);
	uint64_t frag = rec->allocated > rec->requested ?
		est(rec->weight, rec->allocated - rec->requested, rec->requested) : 0;
	uint64_t proxy = rec->proxy ? rec->allocated : 0;

	if (sign > 0) {
		STAT_ADD(samples_total, 1);
		STAT_ADD(live, 1);
		STAT_ADD(pages_bytes, rec->span_bytes);
		STAT_ADD(proxy_bytes, proxy);
		STAT_ADD(inuse_estimate, inuse);
		STAT_ADD(fragmentation_estimate, frag);
	} else {
		STAT_ADD(frees_total, 1);
		STAT_SUB(live, 1);
		STAT_SUB(pages_bytes, rec->span_bytes);
		STAT_SUB(proxy_bytes, proxy);
		STAT_SUB(inuse_estimate, inuse);
		STAT_SUB(fragmentation_estimate, frag);
	}
}

/* Lock held: publish the page cache's figures (stats, registry header). */
static void update_cache_stats(void)
{
	uint64_t cached = hs_pages_cached() << HS_PAGE_SHIFT;

	__atomic_store_n(&stats.cached_bytes, cached, __ATOMIC_RELAXED);
	__atomic_store_n(&stats.recycled_bytes_total,
			 hs_pages_recycled() << HS_PAGE_SHIFT, __ATOMIC_RELAXED);
	__atomic_store_n(&heapscope_registry.cached_bytes, cached,
			 __ATOMIC_RELAXED);
}

size_t hs_sampled_trim(void)
{
	uint64_t pages;

	if (!__atomic_load_n(&hs_sampled_size, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&lock);
	pages = hs_pages_trim();
	update_cache_stats();
	/* records of freed samples (about 0.3 MiB after a 1 GiB heap) */
	size_t records =
		hs_registry_trim() + hs_frag_trim() + hs_unwind_trim();
	pthread_mutex_unlock(&lock);
	return (size_t)(pages << HS_PAGE_SHIFT) + records;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Lock held.  The slot of p, or HS_PAGES_NONE when p does not start a
 * live sampled allocation. */
static uint32_t lookup(const void *p, uint32_t *page)
{
	uintptr_t off = (uintptr_t)p - hs_sampled_start;

	if (off >= hs_sampled_size || (off & (HS_PAGE_SIZE - 1)))
		return HS_PAGES_NONE;
	*page = (uint32_t)(off >> HS_PAGE_SHIFT);
	return hs_pages_slot(*page);
}

/* Lock held.  Retire the record in slot of the sampled allocation p (its
 * pages are the caller's business): lifetime sessions, sample_free before
 * the pages can be reused, statistics, registry.  stack/depth: where it
 * was freed; t: now (ns).  Returns its proxy (to be freed after the lock),
 * or NULL. */
static void *release_record(uint32_t slot, const void *p, const uint64_t *stack,
			    uint32_t depth, uint64_t t, int lifetime)
{
	struct heapscope_record *rec = hs_registry_record(slot);
	uint64_t seq = hs_registry_next_seq();
	void *proxy = (void *)(uintptr_t)rec->proxy;

	if (lifetime)
		hs_session_on_free(rec, stack, depth, t, hs_gettid());
	if (HS_PROBE_ENABLED(sample_free))
		HS_PROBE_SAMPLE_FREE(p, rec->requested, rec->allocated, rec->seq,
				     stack, depth, seq);
	HS_PROBE_COMPAT_FREE(p, rec->requested, rec->allocated);
	account(rec, -1);
	hs_frag_clear(slot);
	hs_registry_release(slot); /* seq cleared first */
	hs_frag_refresh_some(t);
	return proxy;
}

/* Lock held.  The large unsampled block on the run at page (all its
 * pages) enters (sign 1) or leaves (-1) the heap's figures. */
static void plain_account(uint32_t page, int sign)
{
	count_region_block((int64_t)hs_pages_len(page) << HS_PAGE_SHIFT, sign);
}

/* Lock held.  hs_pages_extend() of the run at page tagged slot.  A plain
 * run's old length leaves the large-allocation figures when it grows (the
 * caller accounts the new length if the run stays plain). */
static bool extend_run(uint32_t page, uint32_t slot, uint32_t n)
{
	if (slot != PLAIN_SLOT)
		return hs_pages_extend(page, n);
	plain_account(page, -1);
	if (hs_pages_extend(page, n))
		return true;
	plain_account(page, 1);
	return false;
}

/* Does a sample of r requested, a allocated bytes hold a proxy?  Small
 * classes only, and only up to HEAPSCOPE_PROXY_MAX bytes of a (default
 * 4096: below one OS page a proxy costs at most the page rounding the
 * sample's own page already pays; above it, a whole extra object). */
static bool wants_proxy(size_t r, size_t a)
{
	int64_t max = hs_option_get(HS_OPT_PROXY_MAX);

	return r <= HS_MAX_SMALL_SIZE && a <= HS_MAX_SMALL_SIZE && max > 0 &&
	       a <= (uint64_t)max;
}

/* Take the sample: pages, proxy, stack, record, probe.  Guard held.
 * grow: a live sampled allocation that realloc is growing to r bytes, or
 * NULL; when its page run has (or can get, in place) the pages r needs,
 * the new sample reuses its address and contents and its old record is
 * retired first (sample_free, then sample_alloc of the same pointer). */
static void *take_sample(size_t r, size_t align, size_t w, void *grow)
{
	uint64_t stack[HEAPSCOPE_MAX_FRAMES];
	struct heapscope_record *rec;
	size_t a, bytes, npages, align_pages;
	uint32_t depth, slot, page, old_slot;
	uint64_t seq, t;
	void *proxy = NULL, *old_proxy = NULL, *p;

	if (align > REGION_ALIGN)
		return NULL;
	a = hs_alloc_size_for(r, align);
	bytes = a > r ? a : r;
	if (bytes == 0)
		bytes = 1;
	npages = (bytes + HS_PAGE_SIZE - 1) >> HS_PAGE_SHIFT;
	if (bytes > hs_sampled_size || npages > UINT32_MAX / 2)
		return NULL;
	align_pages = align > HS_PAGE_SIZE ? align >> HS_PAGE_SHIFT : 1;
	if (wants_proxy(r, a)) {
		proxy = hs_alloc_unsampled(r, align);
		if (!proxy)
			return NULL;
	}
	depth = hs_unwind_capture(stack, HEAPSCOPE_MAX_FRAMES);
	t = now_ns();

	pthread_mutex_lock(&lock);
	slot = hs_registry_slot_alloc();
	if (slot == HS_REGISTRY_NO_SLOT)
		goto fail;
	if (grow && (old_slot = lookup(grow, &page)) != HS_PAGES_NONE &&
	    extend_run(page, old_slot, (uint32_t)npages)) {
		p = grow;
		if (old_slot != PLAIN_SLOT)
			old_proxy = release_record(
				old_slot, p, stack, depth, t,
				__atomic_load_n(&hs_lifetime_sessions_active,
						__ATOMIC_RELAXED));
		hs_pages_set_slot(page, slot);
		npages = hs_pages_len(page);
	} else {
		page = hs_pages_alloc((uint32_t)npages, (uint32_t)align_pages,
				      slot);
		if (page == HS_PAGES_NONE) {
			hs_registry_slot_free(slot);
			goto fail;
		}
		p = (void *)(hs_sampled_start + ((uintptr_t)page << HS_PAGE_SHIFT));
	}
	rec = hs_registry_record(slot);
	rec->ptr = (uintptr_t)p;
	rec->requested = r;
	rec->allocated = a;
	rec->alignment = align;
	rec->weight = w;
	rec->time_ns = t;
	rec->proxy = (uintptr_t)proxy;
	rec->span_start = (uintptr_t)p;
	rec->span_bytes = npages << HS_PAGE_SHIFT;
	rec->tid = hs_gettid();
	rec->depth = depth;
	memcpy(rec->stack, stack, depth * sizeof(stack[0]));
	seq = hs_registry_next_seq();
	hs_registry_publish(slot, seq); /* seq stored last */
	account(rec, 1);
	update_cache_stats();
	hs_frag_fill(slot, t);
	hs_frag_refresh_some(t);
	if (__atomic_load_n(&hs_allocs_sessions_active, __ATOMIC_RELAXED))
		hs_session_on_alloc(rec);
	pthread_mutex_unlock(&lock);
	if (old_proxy)
		hs_free_unsampled(old_proxy);

	/* Nobody else can free p before we return it: firing outside the
	 * lock cannot reorder this event after its own sample_free. */
	if (HS_PROBE_ENABLED(sample_alloc))
		HS_PROBE_SAMPLE_ALLOC(p, r, a, align, w, stack, depth, seq);
	HS_PROBE_COMPAT_ALLOC(p, r, a, w);
	return p;
fail:
	pthread_mutex_unlock(&lock);
	if (proxy)
		hs_free_unsampled(proxy);
	return NULL;
}

static void *sample_slow(hs_sampler_t *s, size_t requested, size_t align,
			 void *grow)
{
	int64_t ctl = hs_registry_take_control();
	size_t w;
	void *p;

	if (HS_UNLIKELY(!__atomic_load_n(&sampling_ready, __ATOMIC_ACQUIRE))) {
		/* Before the library constructor the options may not be
		 * final (environ): leave the sampler unseeded and come back
		 * on every allocation until then (a few hundred calls). */
		s->bytes_until_sample = 0;
		return NULL;
	}
	if (HS_UNLIKELY(ctl != 0))
		heapscope_set_sample_period(ctl < 0 ? 0 : ctl);
	w = hs_sampler_record_slow(s, requested);
	if (HS_LIKELY(w == 0))
		return NULL;
	if (!__atomic_load_n(&hs_sampled_size, __ATOMIC_ACQUIRE) ||
	    !hs_guard_enter()) {
		STAT_ADD(dropped_total, 1);
		return NULL;
	}
	p = take_sample(requested, align, w, grow);
	if (!p)
		STAT_ADD(dropped_total, 1);
	hs_guard_leave();
	return p;
}

void *hs_sample_alloc_slow(hs_sampler_t *s, size_t requested, size_t align)
{
	return sample_slow(s, requested, align, NULL);
}

void *hs_sample_realloc_slow(hs_sampler_t *s, size_t requested, void *p)
{
	return sample_slow(s, requested, 0, p);
}

static void report_invalid(const void *p, int guarded)
{
	uint64_t n = __atomic_add_fetch(&stats.invalid_frees_total, 1,
					__ATOMIC_RELAXED);

	if (!guarded || n > MAX_INVALID_REPORTS)
		return;
	hs_log("heapscope: invalid or double free of %p in the sampled region "
	       "(ignored)%s\n", p,
	       n == MAX_INVALID_REPORTS ? "; further reports suppressed" : "");
}

/* The allocation a mismatched sized free refers to (copied under the
 * lock, reported after it). */
struct mismatch {
	uint64_t requested, allocated, seq;
	uint32_t depth;
	uint64_t stack[HEAPSCOPE_MAX_FRAMES];
};

static uintptr_t mismatch_sites[MISMATCH_SITES];

/* First report for this call site?  Lock-free claim of a table slot;
 * once the table is full, new sites are only counted. */
static int first_at_site(uintptr_t site)
{
	for (int i = 0; i < MISMATCH_SITES; i++) {
		uintptr_t cur = __atomic_load_n(&mismatch_sites[i],
						__ATOMIC_ACQUIRE);

		if (cur == site)
			return 0;
		if (cur == 0 &&
		    __atomic_compare_exchange_n(&mismatch_sites[i], &cur, site,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return 1;
		if (cur == site)
			return 0;
	}
	return 0;
}

static void report_mismatch(const void *p, size_t given,
			    const struct mismatch *m, const uint64_t *fstack,
			    uint32_t fdepth)
{
	char line[160];
	int n;

	STAT_ADD(mismatched_frees_total, 1);
	if (HS_PROBE_ENABLED(mismatched_free))
		HS_PROBE_MISMATCHED_FREE(p, given, m->requested, m->allocated,
					 m->seq);
	if (!first_at_site(fdepth ? (uintptr_t)fstack[0] : 1))
		return;
	hs_log("heapscope: sized free of %p with size %zu, but it was "
	       "allocated with size %zu (usable %zu); freed anyway. Reported "
	       "once per call site.\n", p, given, (size_t)m->requested,
	       (size_t)m->allocated);
	if (fdepth)
		hs_log("heapscope:   freed at %p\n", (void *)(uintptr_t)fstack[0]);
	for (uint32_t i = 0; i < m->depth && i < 16; i++) {
		n = hs_snprintf(line, sizeof(line), "heapscope:   %s #%u %p\n",
				i == 0 ? "allocated at" : "            ", i,
				(void *)(uintptr_t)m->stack[i]);
		(void)n;
		hs_log("%s", line);
	}
}

/* Takes the lock and looks p up (lookup()).  When p starts a sample
 * whose release needs the freeing stack (sample_free probe, lifetime
 * session; not while unwinding), drops the lock to capture it into
 * stack[] (*depth), then takes the lock and looks p up again; a large
 * unsampled block needs no stack.  *t: now, after the capture.  Returns
 * with the lock held.  (p's owner is freeing or growing it: between the
 * two lookups it changes only by a double free, which the second
 * reports.) */
static uint32_t lock_lookup(const void *p, uint32_t *page, int guarded,
			    int lifetime, uint64_t *stack, uint32_t *depth,
			    uint64_t *t)
{
	uint32_t slot;

	pthread_mutex_lock(&lock);
	slot = lookup(p, page);
	if (slot != HS_PAGES_NONE && slot != PLAIN_SLOT && guarded &&
	    (HS_PROBE_ENABLED(sample_free) || lifetime)) {
		pthread_mutex_unlock(&lock);
		*depth = hs_unwind_capture(stack, HEAPSCOPE_MAX_FRAMES);
		pthread_mutex_lock(&lock);
		slot = lookup(p, page);
	}
	*t = now_ns();
	return slot;
}

void hs_sampled_free(void *p, size_t size_hint)
{
	uint64_t stack[HEAPSCOPE_MAX_FRAMES];
	struct heapscope_record *rec;
	struct mismatch mm;
	uint32_t depth = 0, slot, page = 0;
	int guarded = hs_guard_enter(), mismatched = 0;
	uint64_t t;
	int lifetime = __atomic_load_n(&hs_lifetime_sessions_active,
				       __ATOMIC_RELAXED);
	void *proxy;

	slot = lock_lookup(p, &page, guarded, lifetime, stack, &depth, &t);
	if (slot == PLAIN_SLOT) {
		/* a large unsampled block: no record, no probe */
		plain_account(page, -1);
		hs_pages_free(page);
		update_cache_stats();
		pthread_mutex_unlock(&lock);
		goto out;
	}
	if (slot == HS_PAGES_NONE) {
		pthread_mutex_unlock(&lock);
		report_invalid(p, guarded);
		goto out;
	}
	rec = hs_registry_record(slot);
	/* Sized free (free_sized, free_aligned_sized, sized delete): TCMalloc's
	 * rule, r <= size <= a.  0 means "no size given" (plain free); a
	 * free_sized(p, 0) of a non-empty block cannot be told apart. */
	if (size_hint &&
	    (size_hint < rec->requested || size_hint > rec->allocated)) {
		mismatched = 1;
		mm.requested = rec->requested;
		mm.allocated = rec->allocated;
		mm.seq = rec->seq;
		mm.depth = rec->depth < HEAPSCOPE_MAX_FRAMES ? rec->depth :
							       HEAPSCOPE_MAX_FRAMES;
		memcpy(mm.stack, rec->stack, mm.depth * sizeof(mm.stack[0]));
	}
	/* before the pages can be reused or decommitted */
	proxy = release_record(slot, p, stack, depth, t, lifetime);
	hs_pages_free(page);
	update_cache_stats();
	pthread_mutex_unlock(&lock);
	if (proxy)
		hs_free_unsampled(proxy);
	if (mismatched && guarded) {
		if (!depth)
			depth = hs_unwind_capture(stack, HEAPSCOPE_MAX_FRAMES);
		report_mismatch(p, size_hint, &mm, stack, depth);
	} else if (mismatched) {
		STAT_ADD(mismatched_frees_total, 1);
	}
out:
	if (guarded)
		hs_guard_leave();
}

size_t hs_sampled_usable_size(const void *p)
{
	uint32_t slot, page = 0;
	size_t a = 0;

	pthread_mutex_lock(&lock);
	slot = lookup(p, &page);
	if (slot == PLAIN_SLOT)
		a = (size_t)hs_pages_len(page) << HS_PAGE_SHIFT;
	else if (slot != HS_PAGES_NONE)
		a = hs_registry_record(slot)->allocated;
	pthread_mutex_unlock(&lock);
	return a;
}

/* Pages of a block of n bytes (n <= HEAPSCOPE_REGION_BLOCK_MAX). */
static uint32_t pages_for(size_t n)
{
	return (uint32_t)((n + HS_PAGE_SIZE - 1) >> HS_PAGE_SHIFT);
}

/* Largest unsampled block placed in the region (HEAPSCOPE_REGION_BLOCK_MAX,
 * default 64 MiB): larger ones stay in the page heap, which asks for
 * transparent huge pages for chunks of their size (the region never has
 * them). */
static size_t region_block_max(void)
{
	int64_t v = hs_option_get(HS_OPT_REGION_BLOCK_MAX);
	return v > 0 ? (size_t)v : 0;
}

void *hs_region_alloc(size_t n)
{
	uint32_t page;

	if (n <= HS_MAX_SMALL_SIZE || n > region_block_max() ||
	    !__atomic_load_n(&hs_sampled_size, __ATOMIC_ACQUIRE))
		return NULL;
	pthread_mutex_lock(&lock);
	page = hs_pages_alloc(pages_for(n), 1, PLAIN_SLOT);
	if (page != HS_PAGES_NONE) {
		plain_account(page, 1);
		update_cache_stats();
	}
	pthread_mutex_unlock(&lock);
	if (page == HS_PAGES_NONE)
		return NULL;
	return (void *)(hs_sampled_start + ((uintptr_t)page << HS_PAGE_SHIFT));
}

bool hs_region_dirty(const void *p, size_t *off, size_t *len)
{
	uint32_t slot, page = 0, first = 0, count = 0;

	pthread_mutex_lock(&lock);
	slot = lookup(p, &page);
	if (slot != HS_PAGES_NONE)
		hs_pages_dirty(page, &first, &count);
	pthread_mutex_unlock(&lock);
	*off = (size_t)first << HS_PAGE_SHIFT;
	*len = (size_t)count << HS_PAGE_SHIFT;
	return slot != HS_PAGES_NONE;
}

bool hs_region_grow(void *p, size_t n)
{
	uint64_t stack[HEAPSCOPE_MAX_FRAMES];
	uint32_t slot, page = 0, depth = 0;
	int guarded, lifetime;
	void *proxy = NULL;
	bool done = false;
	uint64_t t;

	if (n <= HS_MAX_SMALL_SIZE || n > region_block_max())
		return false;
	guarded = hs_guard_enter();
	lifetime =
		__atomic_load_n(&hs_lifetime_sessions_active, __ATOMIC_RELAXED);
	slot = lock_lookup(p, &page, guarded, lifetime, stack, &depth, &t);
	if (slot != HS_PAGES_NONE && extend_run(page, slot, pages_for(n))) {
		if (slot != PLAIN_SLOT) {
			/* a sample grown unsampled: its record goes */
			proxy = release_record(slot, p, stack, depth, t,
					       lifetime);
			hs_pages_set_slot(page, PLAIN_SLOT);
		}
		plain_account(page, 1);
		update_cache_stats();
		done = true;
	}
	pthread_mutex_unlock(&lock);
	if (proxy)
		hs_free_unsampled(proxy);
	if (guarded)
		hs_guard_leave();
	return done;
}

/* Reserve the registry, the region and its page index.  0 or -errno. */
static int setup_region(void)
{
	size_t size;
	int64_t cache;
	void *region = NULL;

	if (hs_registry_init(REGISTRY_CAPACITY) != 0) {
		hs_log("heapscope: cannot reserve the sample registry; sampling off\n");
		return -ENOMEM;
	}
	/* 256 GiB of address space costs nothing (PROT_NONE, committed as
	 * used); shrink when the address space (RLIMIT_AS) refuses it. */
	for (size = REGION_MAX; size >= REGION_MIN; size >>= 2) {
		region = hs_os_reserve(size, REGION_ALIGN);
		if (region)
			break;
	}
	if (!region) {
		hs_log("heapscope: cannot reserve the sampled region; sampling off\n");
		return -ENOMEM;
	}
	hs_os_nohugepage(region, size);
	/* without it fragmentation profiles are empty; sampling still works */
	if (hs_frag_init(REGISTRY_CAPACITY))
		hs_log("heapscope: cannot reserve the record extension; no fragmentation profile\n");
	cache = hs_option_get(HS_OPT_SAMPLED_CACHE);
	if (hs_pages_init((uintptr_t)region, (uint32_t)(size >> HS_PAGE_SHIFT),
			  cache > 0 ? (uint64_t)cache >> HS_PAGE_SHIFT : 0)) {
		hs_os_unmap(region, size);
		hs_log("heapscope: cannot reserve the sampled page index; sampling off\n");
		return -ENOMEM;
	}
	heapscope_registry.region_start = (uintptr_t)region;
	heapscope_registry.region_size = size;
	stats.region_bytes = size;
	hs_sampled_start = (uintptr_t)region;
	__atomic_store_n(&hs_sampled_size, size, __ATOMIC_RELEASE);
	return 0;
}

void hs_sampling_init(void)
{
	static int done;

	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	hs_sampler_global_init();
	hs_registry_set_period(hs_sampler_period());
	setup_region(); /* on failure samples are dropped (served unsampled) */
	__atomic_store_n(&sampling_ready, 1, __ATOMIC_RELEASE);
}

void hs_sampling_fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void hs_sampling_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

void hs_sampling_fork_child(void)
{
	/* the child has one thread, the one that forked and holds the lock */
	pthread_mutex_unlock(&lock);
}

/* ---- in-process API (include/heapscope/heapscope.h) ---- */

HS_EXPORT int64_t heapscope_get_sample_period(void)
{
	return hs_sampler_period();
}

HS_EXPORT int heapscope_set_sample_period(int64_t bytes)
{
	int64_t old;

	if (bytes > HEAPSCOPE_MAX_SAMPLE_PERIOD)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	old = hs_sampler_set_period(bytes);
	hs_registry_set_period(bytes);
	pthread_mutex_unlock(&lock);
	if (HS_PROBE_ENABLED(rate_change))
		HS_PROBE_RATE_CHANGE(bytes, old);
	return 0;
}

HS_EXPORT int heapscope_collector_attached(void)
{
	return heapscope_sample_alloc_semaphore != 0;
}

HS_EXPORT int heapscope_get_sampling_stats(struct heapscope_sampling_stats *out,
					   size_t size)
{
	struct heapscope_sampling_stats st;
	const uint64_t *src = (const uint64_t *)&stats;
	uint64_t *dst = (uint64_t *)&st;

	if (!out)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(st) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	st.record_bytes = __atomic_load_n(&heapscope_registry.high_water,
					  __ATOMIC_RELAXED) *
			  sizeof(struct heapscope_record);
	memcpy(out, &st, size < sizeof(st) ? size : sizeof(st));
	return 0;
}

void hs_sampled_lock(void)
{
	pthread_mutex_lock(&lock);
}

void hs_sampled_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

size_t hs_sampled_snapshot(struct heapscope_sample *out, size_t max,
			   uint64_t *live)
{
	size_t n = 0;
	uint64_t hw;

	pthread_mutex_lock(&lock);
	*live = __atomic_load_n(&stats.live, __ATOMIC_RELAXED);
	if (*live > max) {
		pthread_mutex_unlock(&lock);
		return (size_t)-1;
	}
	hw = __atomic_load_n(&heapscope_registry.high_water, __ATOMIC_RELAXED);
	for (uint64_t i = 0; i < hw && n < max; i++) {
		const struct heapscope_record *rec = hs_registry_record((uint32_t)i);

		if (rec->seq)
			hs_sample_from_record(&out[n++], rec);
	}
	pthread_mutex_unlock(&lock);
	return n;
}

HS_EXPORT int heapscope_sampled_check(void)
{
	int r;

	pthread_mutex_lock(&lock);
	r = hs_pages_is_valid();
	pthread_mutex_unlock(&lock);
	return r;
}
