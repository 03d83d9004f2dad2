// SPDX-License-Identifier: MIT
/*
 * export_rss.c - the RSS table (profiles/rss.c) as JSON and as Prometheus
 * families, the one rendering `heapscope rss`, the daemon's
 * /debug/heapscope/rss and /metrics (and the OOM snapshot) share.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "export.h"

int hs_rss__write_json(FILE *f, const struct hs_rss_table *t)
{
	fprintf(f, "{\"pid\": %d, \"rss_bytes\": %" PRIu64 ", \"parts\": {",
		(int)t->pid, t->rss_bytes);
	for (int i = 0; i < HS_RSS_NPARTS; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "",
			hs_rss_part_names[i], t->parts[i]);
	fprintf(f,
		"}, \"parts_sum_bytes\": %" PRIu64
		", \"parts_over_rss_bytes\": %" PRIu64
		", \"anonymous_bytes\": %" PRIu64
		", \"heap_in_use_bytes\": %" PRIu64
		", \"heap_in_use_resident_bytes\": %" PRIu64
		", \"heap_in_use_estimate_bytes\": %" PRIu64
		", \"large_measured\": %s"
		", \"anonymous_outside_allocator_bytes\": %" PRIu64
		", \"unresident_bytes\": %" PRIu64
		", \"consistent\": %s, \"sampled_pages_measured\": %s"
		", \"detail\": {"
		"\"thread_cache_bytes\": %" PRIu64
		", \"central_free_bytes\": %" PRIu64
		", \"pageheap_free_bytes\": %" PRIu64
		", \"region_cached_bytes\": %" PRIu64
		", \"span_waste_bytes\": %" PRIu64 ", \"large_bytes\": %" PRIu64
		", \"large_resident_bytes\": %" PRIu64
		", \"large_span_resident_bytes\": %" PRIu64
		", \"large_swapped_bytes\": %" PRIu64
		", \"sampled_pages_bytes\": %" PRIu64
		", \"registry_bytes\": %" PRIu64
		", \"unwind_cache_bytes\": %" PRIu64
		", \"metadata_reserved_bytes\": %" PRIu64
		", \"live_samples\": %" PRIu64 ", \"thread_caches\": %" PRIu64
		"}}\n",
		t->parts_sum,
		t->parts_sum > t->rss_bytes ? t->parts_sum - t->rss_bytes : 0,
		t->anon_bytes, t->heap_in_use_allocated,
		t->parts[HS_RSS_HEAP_IN_USE], t->inuse_estimate,
		t->large_measured ? "true" : "false", t->anon_outside_bytes,
		t->unresident_bytes, t->consistent ? "true" : "false",
		t->sampled_measured ? "true" : "false", t->thread_cache_bytes,
		t->central_free_bytes, t->pageheap_free_bytes,
		t->region_cached_bytes, t->span_waste_bytes, t->large_bytes,
		t->large_resident_bytes, t->large_span_resident,
		t->large_swapped_bytes, t->sampled_pages_bytes,
		t->registry_bytes, t->unwind_cache_bytes,
		t->metadata_reserved_bytes, t->live_samples,
		t->thread_caches_walked);
	return ferror(f) ? -EIO : 0;
}

static const char *const fam_name[HS_RSS_PROM_FAMILIES] = {
	"heapscope_process_rss_bytes",
	"heapscope_process_rss_part_bytes",
	"heapscope_process_heap_in_use_estimate_bytes",
	"heapscope_process_heap_in_use_bytes",
};

static const char *const fam_help[HS_RSS_PROM_FAMILIES] = {
	"Resident set size as the kernel reports it (smaps_rollup Rss).",
	"Where the resident set went, by part (the parts sum to "
	"heapscope_process_rss_bytes; part=\"heap_in_use\" counts the "
	"resident pages of the bytes handed out; docs/profiles.md).",
	"The heap profile's estimate of in-use bytes (sampled), to set "
	"beside heapscope_process_heap_in_use_bytes.",
	"Bytes handed out to the program as the allocator counts them "
	"exactly, resident or not.",
};

void hs_rss__prom_help(FILE *f, unsigned fam)
{
	if (fam >= HS_RSS_PROM_FAMILIES)
		return;
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", fam_name[fam],
		fam_help[fam], fam_name[fam]);
}

void hs_rss__prom_samples(FILE *f, unsigned fam, const struct hs_rss_table *t,
			  const char *labels)
{
	const char *sep = *labels ? "," : "";

	switch (fam) {
	case 0:
		fprintf(f, "%s{%s} %" PRIu64 "\n", fam_name[fam], labels,
			t->rss_bytes);
		break;
	case 1:
		for (int i = 0; i < HS_RSS_NPARTS; i++)
			fprintf(f, "%s{%s%spart=\"%s\"} %" PRIu64 "\n",
				fam_name[fam], labels, sep,
				hs_rss_part_names[i], t->parts[i]);
		break;
	case 2:
		fprintf(f, "%s{%s} %" PRIu64 "\n", fam_name[fam], labels,
			t->inuse_estimate);
		break;
	case 3:
		fprintf(f, "%s{%s} %" PRIu64 "\n", fam_name[fam], labels,
			t->heap_in_use_allocated);
		break;
	}
}
