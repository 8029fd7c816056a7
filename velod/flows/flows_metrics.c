// SPDX-License-Identifier: Apache-2.0
/* velod's flow metrics (flows_metrics.h). */
#include <stdio.h>
#include <stdlib.h>

#include "datapath/flow_maps.h"
#include "flows.h"
#include "flows_metrics.h"
#include "flows_series.h"

struct out {
	FILE *file;
	const char *name;
	const char *const *labels; /* FLOW_SERIES_LABELS names, NULL after the last */
};

static void put_series(const struct flow_series_entry *entry, void *ctx)
{
	struct out *out = ctx;
	const char *sep = "";

	fprintf(out->file, "%s{", out->name);
	/* Label values are pod names (DNS labels) and reason names: nothing to escape. */
	for (unsigned i = 0; i < FLOW_SERIES_LABELS && out->labels[i]; i++, sep = ",")
		fprintf(out->file, "%s%s=\"%s\"", sep, out->labels[i], entry->values[i]);
	fprintf(out->file, "} %llu\n", (unsigned long long)entry->count);
}

/* A counter family of series: help is its # HELP text. */
static void put_family(FILE *file, const char *name, const char *help,
		       const char *const labels[FLOW_SERIES_LABELS],
		       const struct flow_series *series)
{
	struct out out = { .file = file, .name = name, .labels = labels };

	fprintf(file, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	flow_series_foreach(series, put_series, &out);
}

char *flows_metrics(const struct agent *agent)
{
	const struct flows *flows = agent->flows;
	uint64_t counts[VELO_FLOW_N_COUNTS];
	char *text = NULL;
	FILE *file;
	size_t len = 0;

	if (!flows)
		return NULL;
	velo_flow_counters(&agent->config.paths, counts);
	file = open_memstream(&text, &len);
	if (!file)
		return NULL;
	put_family(file, "velo_drops_total",
		   "Packets and connects velo dropped, by the pod it happened to and reason "
		   "(docs/flows.md).",
		   (const char *const[]){ "pod", "reason", NULL }, flows_drops(flows));
	put_family(file, "velo_flows_total", "Connections started and drops, by pod pair.",
		   (const char *const[]){ "src", "dst", "verdict" }, flows_pairs(flows));
	put_family(file, "velo_policy_audit_total",
		   "Flows an audited policy would have dropped (passed), by the pod whose policy "
		   "it is, policy and reason.",
		   (const char *const[]){ "pod", "policy", "reason" }, flows_audits(flows));
	fprintf(file,
		"# HELP velo_flow_events_total Flow events velod read from the ring buffer.\n"
		"# TYPE velo_flow_events_total counter\nvelo_flow_events_total %llu\n"
		"# HELP velo_flow_events_lost_total Flow events the ring had no room for.\n"
		"# TYPE velo_flow_events_lost_total counter\nvelo_flow_events_lost_total %llu\n"
		"# HELP velo_flow_events_sampled_out_total Drops left out while the ring was over "
		"half full (each one kept stands for %u).\n"
		"# TYPE velo_flow_events_sampled_out_total counter\n"
		"velo_flow_events_sampled_out_total %llu\n"
		"# HELP velo_flow_ring_bytes The flow ring buffer's size (0: not open yet).\n"
		"# TYPE velo_flow_ring_bytes gauge\nvelo_flow_ring_bytes %u\n",
		(unsigned long long)flows_read_total(flows),
		(unsigned long long)counts[VELO_FLOW_LOST], VELO_FLOW_SAMPLE,
		(unsigned long long)counts[VELO_FLOW_SAMPLED_OUT], flows_ring_bytes(flows));
	if (fclose(file)) {
		free(text);
		return NULL;
	}
	return text;
}
