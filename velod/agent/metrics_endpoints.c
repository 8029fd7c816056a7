// SPDX-License-Identifier: Apache-2.0
/*
 * Endpoint metrics (metrics_endpoints.h): records counted by network and
 * phase at scrape time, and per-pod counters from velo's pinned maps.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/pod_counters.h"
#include "state/netns_state.h"
#include "state/state.h"
#include "metrics_endpoints.h"
#include "metrics_text.h"

static const char *const phase_names[] = {
	[VELO_PHASE_IPAM] = "ipam",
	[VELO_PHASE_WIRING] = "wiring",
	[VELO_PHASE_FEATURES] = "features",
	[VELO_PHASE_READY] = "ready",
};
#define N_PHASES (sizeof(phase_names) / sizeof(phase_names[0]))

struct pod_series {
	char namespace_[254];
	char pod[254];
	struct velo_pod_counters counters;
};

struct endpoint_count {
	const struct agent *agent;
	struct metrics_text *text;
	unsigned by_phase[N_PHASES];
	unsigned netns_gone;
	struct velo_counter_maps maps;
	struct pod_series *pods;
	unsigned n_pods;
	unsigned max_pods;
	unsigned pods_dropped;
};

static int count_endpoint(const struct velo_record *record, void *ctx)
{
	struct endpoint_count *count = ctx;
	struct pod_series *series;

	if ((unsigned)record->phase < N_PHASES)
		count->by_phase[record->phase]++;
	count->netns_gone += velo_netns_state(record) == VELO_NETNS_GONE;
	if (!count->max_pods || record->phase != VELO_PHASE_READY)
		return 0;
	if (count->n_pods == count->max_pods) {
		count->pods_dropped++;
		return 0;
	}
	series = &count->pods[count->n_pods];
	/* One lookup per pod and map; the metric families are then printed from these. */
	velo_pod_counters_read(&count->maps, record, &series->counters);
	if (!series->counters.has_cgroup && !series->counters.has_xdp &&
	    !series->counters.has_sockmap)
		return 0;
	snprintf(series->namespace_, sizeof(series->namespace_), "%s", record->pod_namespace);
	snprintf(series->pod, sizeof(series->pod), "%s", record->pod_name);
	count->n_pods++;
	return 0;
}

#define AT(field) offsetof(struct velo_pod_counters, field)

/* Per-pod families: each from the source that counts it, for pods that have that source. */
static const struct pod_family {
	const char *name;
	const char *help;
	size_t has; /* the bool saying the pod has the source */
	size_t value; /* the uint64_t counter */
} pod_families[] = {
	{ "velo_pod_receive_bytes_total",
	  "L3 bytes delivered to the pod's sockets, per wire segment (accounting, cgroup ingress).",
	  AT(has_cgroup), AT(rx_bytes) },
	{ "velo_pod_receive_packets_total",
	  "Packets (wire segments) delivered to the pod's sockets (accounting, cgroup ingress).",
	  AT(has_cgroup), AT(rx_packets) },
	{ "velo_pod_transmit_bytes_total",
	  "L3 bytes the pod's sockets sent, per wire segment (accounting, cgroup egress).",
	  AT(has_cgroup), AT(tx_bytes) },
	{ "velo_pod_transmit_packets_total",
	  "Packets (wire segments) the pod's sockets sent (accounting, cgroup egress).",
	  AT(has_cgroup), AT(tx_packets) },
	{ "velo_pod_egress_denied_packets_total", "Packets the pod's egress deny list dropped.",
	  AT(has_cgroup), AT(deny_packets) },
	{ "velo_pod_egress_denied_bytes_total", "L3 bytes the pod's egress deny list dropped.",
	  AT(has_cgroup), AT(deny_bytes) },
	{ "velo_pod_accelerated_bytes_total",
	  "Bytes the XDP fast path redirected to the pod (counted by velo_xdp_dst).", AT(has_xdp),
	  AT(xdp_bytes) },
	{ "velo_pod_accelerated_packets_total",
	  "Packets the XDP fast path redirected to the pod (counted by velo_xdp_dst).", AT(has_xdp),
	  AT(xdp_packets) },
	{ "velo_pod_socket_redirect_transmit_bytes_total",
	  "Payload bytes the pod sent that sk_msg moved straight into a peer pod's socket.",
	  AT(has_sockmap), AT(sockmap_tx_bytes) },
	{ "velo_pod_socket_redirect_receive_bytes_total",
	  "Payload bytes sk_msg moved straight into the pod's sockets from a peer pod.",
	  AT(has_sockmap), AT(sockmap_rx_bytes) },
};

static void put_pod_counters(struct metrics_text *text, const struct endpoint_count *count)
{
	char ns_label[512], pod_label[512];

	for (unsigned f = 0; f < sizeof(pod_families) / sizeof(pod_families[0]); f++) {
		const struct pod_family *family = &pod_families[f];
		bool headed = false;

		for (unsigned i = 0; i < count->n_pods; i++) {
			const char *counters = (const char *)&count->pods[i].counters;
			uint64_t value;

			if (!*(const bool *)(counters + family->has))
				continue;
			if (!headed)
				metrics_header(text, family->name, "counter", family->help);
			headed = true;
			memcpy(&value, counters + family->value, sizeof(value));
			metrics_put(text, "%s{namespace=\"%s\",pod=\"%s\"} %llu\n", family->name,
				    metrics_label(count->pods[i].namespace_, ns_label,
						  sizeof(ns_label)),
				    metrics_label(count->pods[i].pod, pod_label, sizeof(pod_label)),
				    (unsigned long long)value);
		}
	}
}

struct network_counts {
	struct endpoint_count *count;
	struct metrics_text *lines; /* velo_endpoints samples, gathered per network */
	struct metrics_text *gone_lines;
};

static int endpoints_of_network(const char *network, void *ctx)
{
	struct network_counts *counts = ctx;
	struct endpoint_count *count = counts->count;
	char net_label[VELO_NAME_MAX * 2];
	int ret;

	memset(count->by_phase, 0, sizeof(count->by_phase));
	count->netns_gone = 0;
	ret = state_record_foreach(&count->agent->config.paths, network, count_endpoint, count);
	if (ret && ret != -ENOENT)
		return 0; /* an unreadable network shows as missing series, not a failed scrape */
	metrics_label(network, net_label, sizeof(net_label));
	for (unsigned phase = 1; phase < N_PHASES; phase++)
		metrics_put(counts->lines, "velo_endpoints{network=\"%s\",phase=\"%s\"} %u\n",
			    net_label, phase_names[phase], count->by_phase[phase]);
	metrics_put(counts->gone_lines, "velo_endpoints_netns_gone{network=\"%s\"} %u\n", net_label,
		    count->netns_gone);
	return 0;
}

void metrics_endpoints(const struct agent *agent, struct metrics_text *text)
{
	struct endpoint_count count = { .agent = agent, .text = text };
	struct metrics_text lines = {}, gone_lines = {};
	struct network_counts counts = { &count, &lines, &gone_lines };

	count.max_pods = agent->config.pod_metrics ? agent->config.max_pod_series : 0;
	if (count.max_pods) {
		count.pods = calloc(count.max_pods, sizeof(*count.pods));
		if (!count.pods || velo_counter_maps_open(&agent->config.paths, &count.maps))
			count.max_pods = 0;
	}
	agent_foreach_network(&agent->config, endpoints_of_network, &counts);
	metrics_header(text, "velo_endpoints", "gauge", "Endpoint records on this node by phase.");
	if (lines.buf)
		metrics_put(text, "%s", lines.buf);
	metrics_header(
		text, "velo_endpoints_netns_gone", "gauge",
		"Endpoints whose pod netns no longer exists (reconciliation releases them).");
	if (gone_lines.buf)
		metrics_put(text, "%s", gone_lines.buf);
	if (agent->config.pod_metrics) {
		metrics_header(text, "velo_pod_series_dropped", "gauge",
			       "Pods left without per-pod series by maxPodSeries.");
		metrics_put(text, "velo_pod_series_dropped %u\n", count.pods_dropped);
	}
	put_pod_counters(text, &count);
	if (count.max_pods)
		velo_counter_maps_close(&count.maps);
	free(lines.buf);
	free(gone_lines.buf);
	free(count.pods);
}
