// SPDX-License-Identifier: Apache-2.0
/*
 * /metrics in the Prometheus text format (0.0.4). Names and units follow
 * Prometheus conventions: velo_ prefix, _total for counters, base units
 * (seconds, bytes). Endpoint counts come from the records at scrape time
 * (metrics_endpoints.c); BPF cost from the sampler's windows; datapath
 * counters from velo's pinned maps when they exist.
 */
#include <stddef.h>
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
#include "metrics.h"
#include "metrics_endpoints.h"
#include "metrics_text.h"
#include "part.h"

#ifndef VELO_VERSION
#define VELO_VERSION "dev"
#endif

/* ---- BPF ---- */

/* The programs loaded now; what they cost is the sampler's (node/sampler.c). */
static void put_bpf(struct metrics_text *text)
{
	struct velo_prog_set loaded;

	if (velo_progs_sample(false, &loaded))
		return;
	metrics_header(text, "velo_bpf_progs_loaded", "gauge",
		       "velo's BPF programs loaded, by name.");
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
			metrics_put(text, "velo_bpf_progs_loaded{prog=\"%s\",type=\"%s\"} %u\n",
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

static void put_counter_maps(const struct agent *agent, struct metrics_text *text)
{
	for (unsigned m = 0; m < sizeof(counter_maps) / sizeof(counter_maps[0]); m++) {
		const struct counter_map *map = &counter_maps[m];
		int fd = velo_map_pin_open(&agent->config.paths, map->map);
		uint64_t sum;

		if (fd < 0)
			continue; /* not pinned: no fast path of that kind was ever loaded */
		metrics_header(text, map->metric, "counter", map->help);
		for (__u32 key = 0; key < map->n_keys; key++) {
			if (velo_percpu_u64_sum(fd, key, &sum))
				continue;
			metrics_put(text, "%s{", map->metric);
			if (map->hooks)
				metrics_put(text, "hook=\"%s\",", map->hooks[key]);
			metrics_put(text, "outcome=\"%s\"} %llu\n", map->outcomes[key],
				    (unsigned long long)sum);
		}
		close(fd);
	}
}

/* ---- agent ---- */

static void put_agent(const struct agent *agent, struct metrics_text *text)
{
	const struct reconcile_stats *stats = &agent->reconcile;

	metrics_header(text, "velo_build_info", "gauge", "velo's version; always 1.");
	metrics_put(text, "velo_build_info{version=\"%s\",component=\"velod\"} 1\n", VELO_VERSION);
	metrics_header(text, "velo_agent_start_time_seconds", "gauge",
		       "When velod started (unix time).");
	metrics_put(text, "velo_agent_start_time_seconds %.3f\n", agent->started_unix);
	metrics_family_value(text, "velo_reconcile_runs_total", "counter", "Reconciliation passes.",
			     stats->runs);
	metrics_family_value(text, "velo_reconcile_released_total", "counter",
			     "Endpoints released because their netns vanished without a DEL.",
			     stats->released);
	metrics_family_value(text, "velo_reconcile_skipped_busy_total", "counter",
			     "Stale endpoints skipped because an ADD or DEL held their lock.",
			     stats->busy);
	metrics_family_value(text, "velo_reconcile_errors_total", "counter",
			     "Releases or scans that failed (see velod's log).", stats->errors);
	metrics_header(text, "velo_reconcile_last_success_timestamp_seconds", "gauge",
		       "When the last reconciliation pass completed its scan (unix time).");
	metrics_put(text, "velo_reconcile_last_success_timestamp_seconds %.3f\n",
		    stats->last_success_unix);
}

char *metrics_render(const struct agent *agent, size_t *len)
{
	struct metrics_text text = {};

	put_agent(agent, &text);
	metrics_endpoints(agent, &text);
	put_bpf(&text);
	put_counter_maps(agent, &text);
	for (unsigned i = 0; i < agent->n_parts; i++) {
		char *part;

		if (!agent->parts[i]->metrics)
			continue;
		part = agent->parts[i]->metrics(agent);
		if (part)
			metrics_put(&text, "%s", part);
		free(part);
	}
	*len = text.len;
	return metrics_text_end(&text);
}

int agent_health(const struct agent *agent, char *buf, size_t len)
{
	/* Every part in place once: a pod sent here must find its routes and Services, not
	 * empty maps. */
	for (unsigned i = 0; i < agent->n_parts; i++) {
		int ret = agent->parts[i]->health ? agent->parts[i]->health(agent, buf, len) : 0;

		if (ret)
			return ret;
	}
	snprintf(buf, len, "ok\n");
	return 0;
}
