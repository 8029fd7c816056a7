// SPDX-License-Identifier: Apache-2.0
/*
 * /metrics in the Prometheus text format (0.0.4). Names and units follow
 * Prometheus conventions: velo_ prefix, _total for counters, base units
 * (seconds, bytes). Endpoint counts come from the records at scrape time;
 * BPF cost from the sampler's windows; datapath counters from velo's pinned
 * maps when they exist.
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/lib/velo_shared.h"
#include "bpf/lib/velo_sockmap.h"
#include "datapath/loader.h"
#include "datapath/pod_counters.h"
#include "datapath/sockmap_stats.h"
#include "state/netns_state.h"
#include "state/state.h"
#include "config.h"
#include "flows_metrics.h"
#include "k8s_nodes.h"
#include "metrics.h"
#include "policy_metrics.h"
#include "reconcile.h"
#include "services_metrics.h"
#include "uplink_xdp.h"

#ifndef VELO_VERSION
#define VELO_VERSION "dev"
#endif

struct text {
	char *buf;
	size_t len, cap;
	bool failed;
};

static void __attribute__((format(printf, 2, 3))) put(struct text *text, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (text->failed)
		return;
	for (;;) {
		size_t room = text->cap - text->len;

		va_start(ap, fmt);
		n = vsnprintf(text->buf ? text->buf + text->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			text->failed = true;
			return;
		}
		if ((size_t)n < room) {
			text->len += (size_t)n;
			return;
		}
		size_t cap = text->cap ? text->cap * 2 : 16384;
		char *grown;

		while (cap - text->len <= (size_t)n)
			cap *= 2;
		grown = realloc(text->buf, cap);
		if (!grown) {
			text->failed = true;
			return;
		}
		text->buf = grown;
		text->cap = cap;
	}
}

/* A label value with \, " and newline escaped (the format's rule). */
static const char *label(const char *value, char *buf, size_t len)
{
	size_t used = 0;

	for (; *value && used + 2 < len; value++) {
		if (*value == '\\' || *value == '"' || *value == '\n') {
			buf[used++] = '\\';
			buf[used++] = *value == '\n' ? 'n' : *value;
		} else {
			buf[used++] = *value;
		}
	}
	buf[used] = '\0';
	return buf;
}

static void header(struct text *text, const char *name, const char *type, const char *help)
{
	put(text, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* ---- endpoints ---- */

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
	struct text *text;
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

static void put_pod_counters(struct text *text, const struct endpoint_count *count)
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
				header(text, family->name, "counter", family->help);
			headed = true;
			memcpy(&value, counters + family->value, sizeof(value));
			put(text, "%s{namespace=\"%s\",pod=\"%s\"} %llu\n", family->name,
			    label(count->pods[i].namespace_, ns_label, sizeof(ns_label)),
			    label(count->pods[i].pod, pod_label, sizeof(pod_label)),
			    (unsigned long long)value);
		}
	}
}

struct network_counts {
	struct endpoint_count *count;
	struct text *lines; /* velo_endpoints samples, gathered per network */
	struct text *gone_lines;
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
	label(network, net_label, sizeof(net_label));
	for (unsigned phase = 1; phase < N_PHASES; phase++)
		put(counts->lines, "velo_endpoints{network=\"%s\",phase=\"%s\"} %u\n", net_label,
		    phase_names[phase], count->by_phase[phase]);
	put(counts->gone_lines, "velo_endpoints_netns_gone{network=\"%s\"} %u\n", net_label,
	    count->netns_gone);
	return 0;
}

static void put_endpoints(const struct agent *agent, struct text *text)
{
	struct endpoint_count count = { .agent = agent, .text = text };
	struct text lines = {}, gone_lines = {};
	struct network_counts counts = { &count, &lines, &gone_lines };

	count.max_pods = agent->config.pod_metrics ? agent->config.max_pod_series : 0;
	if (count.max_pods) {
		count.pods = calloc(count.max_pods, sizeof(*count.pods));
		if (!count.pods || velo_counter_maps_open(&agent->config.paths, &count.maps))
			count.max_pods = 0;
	}
	agent_foreach_network(&agent->config, endpoints_of_network, &counts);
	header(text, "velo_endpoints", "gauge", "Endpoint records on this node by phase.");
	if (lines.buf)
		put(text, "%s", lines.buf);
	header(text, "velo_endpoints_netns_gone", "gauge",
	       "Endpoints whose pod netns no longer exists (reconciliation releases them).");
	if (gone_lines.buf)
		put(text, "%s", gone_lines.buf);
	if (agent->config.pod_metrics) {
		header(text, "velo_pod_series_dropped", "gauge",
		       "Pods left without per-pod series by maxPodSeries.");
		put(text, "velo_pod_series_dropped %u\n", count.pods_dropped);
	}
	put_pod_counters(text, &count);
	if (count.max_pods)
		velo_counter_maps_close(&count.maps);
	free(lines.buf);
	free(gone_lines.buf);
	free(count.pods);
}

/* ---- BPF ---- */

static void put_bpf(const struct agent *agent, struct text *text)
{
	const struct sampler *sampler = &agent->sampler;
	struct velo_prog_set loaded;

	header(text, "velo_bpf_prog_run_count_total", "counter",
	       "Runs of velo's BPF programs seen during sampling windows only.");
	for (unsigned i = 0; i < sampler->n_costs; i++)
		put(text, "velo_bpf_prog_run_count_total{prog=\"%s\",type=\"%s\"} %llu\n",
		    sampler->costs[i].name, sampler->costs[i].type,
		    (unsigned long long)sampler->costs[i].runs);
	header(text, "velo_bpf_prog_run_seconds_total", "counter",
	       "CPU time velo's BPF programs ran during sampling windows only.");
	for (unsigned i = 0; i < sampler->n_costs; i++)
		put(text, "velo_bpf_prog_run_seconds_total{prog=\"%s\",type=\"%s\"} %.9f\n",
		    sampler->costs[i].name, sampler->costs[i].type,
		    (double)sampler->costs[i].run_time_ns / 1e9);
	header(text, "velo_bpf_stats_sampled_seconds_total", "counter",
	       "Wall time covered by sampling windows (BPF stats on node-wide).");
	put(text, "velo_bpf_stats_sampled_seconds_total %.6f\n", sampler->sampled_seconds);
	header(text, "velo_bpf_stats_windows_total", "counter", "Sampling windows completed.");
	put(text, "velo_bpf_stats_windows_total %llu\n", (unsigned long long)sampler->windows);
	header(text, "velo_bpf_stats_errors_total", "counter",
	       "Sampling windows that could not be taken.");
	put(text, "velo_bpf_stats_errors_total %llu\n", (unsigned long long)sampler->errors);

	if (velo_progs_sample(false, &loaded))
		return;
	header(text, "velo_bpf_progs_loaded", "gauge", "velo's BPF programs loaded, by name.");
	for (unsigned i = 0; i < loaded.n; i++) {
		unsigned same = 0;
		bool first = true;

		for (unsigned j = 0; j < loaded.n; j++) {
			if (strcmp(loaded.progs[j].name, loaded.progs[i].name))
				continue;
			same++;
			if (j < i)
				first = false;
		}
		if (first)
			put(text, "velo_bpf_progs_loaded{prog=\"%s\",type=\"%s\"} %u\n",
			    loaded.progs[i].name, loaded.progs[i].type, same);
	}
	velo_progs_free(&loaded);
}

/* velo_stats_v1's keys: the tc/XDP programs' hook and outcome. */
static const char *const datapath_hooks[VELO_STAT_MAX] = {
	[VELO_STAT_TC_REDIRECT] = "tc", [VELO_STAT_TC_PASS] = "tc",
	[VELO_STAT_TC_SPOOF] = "tc",	[VELO_STAT_XDP_REDIRECT] = "xdp",
	[VELO_STAT_XDP_PASS] = "xdp",	[VELO_STAT_XDP_SPOOF] = "xdp",
	[VELO_STAT_TTL] = "any",	[VELO_STAT_MTU] = "any",
	[VELO_STAT_NAT] = "any",	[VELO_STAT_NO_CT] = "any",
};
static const char *const datapath_outcomes[VELO_STAT_MAX] = {
	[VELO_STAT_TC_REDIRECT] = "redirect", [VELO_STAT_TC_PASS] = "pass",
	[VELO_STAT_TC_SPOOF] = "drop_spoof",  [VELO_STAT_XDP_REDIRECT] = "redirect",
	[VELO_STAT_XDP_PASS] = "pass",	      [VELO_STAT_XDP_SPOOF] = "drop_spoof",
	[VELO_STAT_TTL] = "pass_ttl",	      [VELO_STAT_MTU] = "pass_mtu",
	[VELO_STAT_NAT] = "pass_nat",	      [VELO_STAT_NO_CT] = "pass_no_ct",
};
_Static_assert(VELO_STAT_NO_CT + 1 == VELO_STAT_MAX, "name every datapath outcome");

/*
 * Pinned per-CPU maps of __u64 counters, one series per key: a key's labels
 * are hook (when the map has one) and outcome, named by the tables above.
 */
static const struct counter_map {
	const char *map, *metric, *help;
	unsigned n_keys;
	const char *const *hooks; /* NULL: no hook label */
	const char *const *outcomes;
} counter_maps[] = {
	{ VELO_MAP_STATS, "velo_datapath_packets_total",
	  "Packets velo's tc/XDP programs handled, by hook and outcome.", VELO_STAT_MAX,
	  datapath_hooks, datapath_outcomes },
	{ VELO_MAP_SM_STATS, "velo_sockmap_events_total",
	  "Socket short-circuit decisions (sock_ops inserts, sk_msg verdicts), by outcome.",
	  VELO_SM_STAT_MAX, NULL, velo_sm_stat_names },
};

static void put_counter_maps(const struct agent *agent, struct text *text)
{
	for (unsigned m = 0; m < sizeof(counter_maps) / sizeof(counter_maps[0]); m++) {
		const struct counter_map *map = &counter_maps[m];
		int fd = velo_map_pin_open(&agent->config.paths, map->map);
		uint64_t sum;

		if (fd < 0)
			continue; /* not pinned: no fast path of that kind was ever loaded */
		header(text, map->metric, "counter", map->help);
		for (__u32 key = 0; key < map->n_keys; key++) {
			if (velo_percpu_u64_sum(fd, key, &sum))
				continue;
			put(text, "%s{", map->metric);
			if (map->hooks)
				put(text, "hook=\"%s\",", map->hooks[key]);
			put(text, "outcome=\"%s\"} %llu\n", map->outcomes[key],
			    (unsigned long long)sum);
		}
		close(fd);
	}
}

/* ---- agent ---- */

static void put_node_watch(struct k8s_watch_set *watch, struct text *text)
{
	struct k8s_watch_stats stats;

	k8s_watch_set_stats(watch, 0, &stats);
	header(text, "velo_k8s_nodes", "gauge", "Nodes in the list the Node watch keeps.");
	put(text, "velo_k8s_nodes %u\n", stats.objects);
	header(text, "velo_k8s_node_lists_total", "counter",
	       "Complete LISTs of the API's Nodes, the first and every relist.");
	put(text, "velo_k8s_node_lists_total %llu\n", (unsigned long long)stats.lists);
	header(text, "velo_k8s_node_relists_total", "counter",
	       "LISTs after the first (410 Gone: the watch could not resume).");
	put(text, "velo_k8s_node_relists_total %llu\n", (unsigned long long)stats.relists);
	header(text, "velo_k8s_watch_restarts_total", "counter",
	       "Node watches that ended (server timeout, dropped connection, error) and were "
	       "started again.");
	put(text, "velo_k8s_watch_restarts_total %llu\n", (unsigned long long)stats.watch_restarts);
	header(text, "velo_k8s_watch_events_total", "counter",
	       "Node watch events received, bookmarks included.");
	put(text, "velo_k8s_watch_events_total %llu\n", (unsigned long long)stats.events);
	header(text, "velo_k8s_errors_total", "counter",
	       "Failed Node LISTs and watches, Nodes velod could not use.");
	put(text, "velo_k8s_errors_total %llu\n", (unsigned long long)stats.errors);
}

static void put_agent(const struct agent *agent, struct text *text)
{
	const struct reconcile_stats *stats = &agent->reconcile;

	header(text, "velo_build_info", "gauge", "velo's version; always 1.");
	put(text, "velo_build_info{version=\"%s\",component=\"velod\"} 1\n", VELO_VERSION);
	header(text, "velo_agent_start_time_seconds", "gauge", "When velod started (unix time).");
	put(text, "velo_agent_start_time_seconds %.3f\n", agent->started_unix);
	header(text, "velo_reconcile_runs_total", "counter", "Reconciliation passes.");
	put(text, "velo_reconcile_runs_total %llu\n", (unsigned long long)stats->runs);
	header(text, "velo_reconcile_released_total", "counter",
	       "Endpoints released because their netns vanished without a DEL.");
	put(text, "velo_reconcile_released_total %llu\n", (unsigned long long)stats->released);
	header(text, "velo_reconcile_skipped_busy_total", "counter",
	       "Stale endpoints skipped because an ADD or DEL held their lock.");
	put(text, "velo_reconcile_skipped_busy_total %llu\n", (unsigned long long)stats->busy);
	header(text, "velo_reconcile_errors_total", "counter",
	       "Releases or scans that failed (see velod's log).");
	put(text, "velo_reconcile_errors_total %llu\n", (unsigned long long)stats->errors);
	header(text, "velo_reconcile_last_success_timestamp_seconds", "gauge",
	       "When the last reconciliation pass completed its scan (unix time).");
	put(text, "velo_reconcile_last_success_timestamp_seconds %.3f\n", stats->last_success_unix);
	if (!agent_hostgw_on(&agent->config))
		return;
	header(text, "velo_hostgw_routes", "gauge",
	       "Routes to other nodes' pod CIDRs the last host-gw pass installed.");
	put(text, "velo_hostgw_routes %u\n", agent->hostgw.routes);
	header(text, "velo_hostgw_syncs_total", "counter", "host-gw passes over the node list.");
	put(text, "velo_hostgw_syncs_total %llu\n", (unsigned long long)agent->hostgw.syncs);
	header(text, "velo_hostgw_errors_total", "counter",
	       "Node-list errors, claimed own CIDRs, unreachable next hops, failed route changes.");
	put(text, "velo_hostgw_errors_total %llu\n", (unsigned long long)agent->hostgw.errors);
	if (agent->hostgw.watch)
		put_node_watch(agent->hostgw.watch, text);
}

char *metrics_render(const struct agent *agent, size_t *len)
{
	struct text text = {};
	char *uplink;

	put_agent(agent, &text);
	put_endpoints(agent, &text);
	put_bpf(agent, &text);
	put_counter_maps(agent, &text);
	uplink = uplink_xdp_metrics(&agent->config);
	if (uplink)
		put(&text, "%s", uplink);
	free(uplink);
	uplink = services_metrics(&agent->services, &agent->config);
	if (uplink)
		put(&text, "%s", uplink);
	free(uplink);
	uplink = policy_metrics(&agent->policy, &agent->config);
	if (uplink)
		put(&text, "%s", uplink);
	free(uplink);
	uplink = flows_metrics(agent);
	if (uplink)
		put(&text, "%s", uplink);
	free(uplink);
	if (text.failed || !text.buf) {
		free(text.buf);
		errno = ENOMEM;
		return NULL;
	}
	*len = text.len;
	return text.buf;
}

int agent_health(const struct agent *agent, char *buf, size_t len)
{
	if (agent->reconcile.last_scan_error) {
		snprintf(buf, len, "reconcile cannot read endpoint records under %s: %s\n",
			 agent->config.paths.state_dir,
			 strerror(-agent->reconcile.last_scan_error));
		return agent->reconcile.last_scan_error;
	}
	/* Every configured source in place once: a pod sent here must find its routes and
	 * Services, not empty maps. */
	if (agent->hostgw.watch && !agent->hostgw.synced) {
		struct k8s_watch_stats stats;

		k8s_watch_set_stats(agent->hostgw.watch, 0, &stats);
		snprintf(buf, len, "waiting for the first Node LIST and route sync%s%s\n",
			 stats.last_error[0] ? ": " : "", stats.last_error);
		return -EAGAIN;
	}
	if (!agent->hostgw.watch && agent->config.nodes_file[0] && agent->config.route_sync_s &&
	    !agent->hostgw.synced) {
		snprintf(buf, len, "waiting for the first route sync from %s\n",
			 agent->config.nodes_file);
		return -EAGAIN;
	}
	if (agent->config.services_source != SERVICES_NONE && !agent->services.synced) {
		snprintf(buf, len,
			 "waiting for the first sync of the Services and EndpointSlices %s "
			 "into the maps (%llu failed so far)\n",
			 agent->config.services_source == SERVICES_API ? "the API lists" : "file",
			 (unsigned long long)agent->services.errors);
		return -EAGAIN;
	}
	if (!agent->policy.synced) {
		snprintf(buf, len, "waiting for the policy source's first sync\n");
		return -EAGAIN;
	}
	snprintf(buf, len, "ok\n");
	return 0;
}
