// SPDX-License-Identifier: Apache-2.0
/* host-gw's part of velod's /metrics and /healthz (hostgw_metrics.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/config.h"
#include "agent/metrics_text.h"
#include "hostgw_metrics.h"
#include "k8s/k8s_nodes.h"
#include "routing_backend.h"
#include "routing_paths.h"

static void put_node_watch(struct k8s_watch_set *watch, struct metrics_text *text)
{
	struct k8s_watch_stats stats;

	k8s_watch_set_stats(watch, 0, &stats);
	metrics_family_value(text, "velo_k8s_nodes", "gauge",
			     "Nodes in the list the Node watch keeps.", stats.objects);
	metrics_family_value(text, "velo_k8s_node_lists_total", "counter",
			     "Complete LISTs of the API's Nodes, the first and every relist.",
			     stats.lists);
	metrics_family_value(text, "velo_k8s_node_relists_total", "counter",
			     "LISTs after the first (410 Gone: the watch could not resume).",
			     stats.relists);
	metrics_family_value(text, "velo_k8s_watch_restarts_total", "counter",
			     "Node watches that ended (server timeout, dropped connection, error) "
			     "and were started again.",
			     stats.watch_restarts);
	metrics_family_value(text, "velo_k8s_watch_events_total", "counter",
			     "Node watch events received, bookmarks included.", stats.events);
	metrics_family_value(text, "velo_k8s_errors_total", "counter",
			     "Failed Node LISTs and watches, Nodes velod could not use.",
			     stats.errors);
}

char *hostgw_metrics(const struct agent *agent)
{
	struct metrics_text text = {};

	if (!agent_hostgw_on(&agent->config))
		return NULL;
	if (agent->hostgw.backend) {
		metrics_header(&text, "velo_routing_mode", "gauge",
			       "The routing backend routingMode picked (label mode).");
		metrics_put(&text, "velo_routing_mode{mode=\"%s\"} 1\n",
			    agent->hostgw.backend->name);
	}
	metrics_family_value(&text, "velo_hostgw_routes", "gauge",
			     "Routes to other nodes' pod CIDRs the last host-gw pass installed.",
			     agent->hostgw.routes);
	metrics_family_value(&text, "velo_hostgw_syncs_total", "counter",
			     "host-gw passes over the node list.", agent->hostgw.syncs);
	metrics_family_value(&text, "velo_hostgw_errors_total", "counter",
			     "Node-list errors, claimed own CIDRs, unreachable next hops, failed "
			     "route changes.",
			     agent->hostgw.errors);
	routing_paths_metrics(&text);
	if (agent->hostgw.watch)
		put_node_watch(agent->hostgw.watch, &text);
	return metrics_text_end(&text);
}

int hostgw_health(const struct agent *agent, char *buf, size_t len)
{
	/* A pod sent here must find its routes, not an empty table. */
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
	return 0;
}
