// SPDX-License-Identifier: Apache-2.0
/* host-gw's part of velod's /metrics and /healthz (hostgw_metrics.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/config.h"
#include "hostgw_metrics.h"
#include "k8s/k8s_nodes.h"
#include "routing_backend.h"
#include "routing_paths.h"

static void header(FILE *text, const char *name, const char *type, const char *help)
{
	fprintf(text, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_node_watch(struct k8s_watch_set *watch, FILE *text)
{
	struct k8s_watch_stats stats;

	k8s_watch_set_stats(watch, 0, &stats);
	header(text, "velo_k8s_nodes", "gauge", "Nodes in the list the Node watch keeps.");
	fprintf(text, "velo_k8s_nodes %u\n", stats.objects);
	header(text, "velo_k8s_node_lists_total", "counter",
	       "Complete LISTs of the API's Nodes, the first and every relist.");
	fprintf(text, "velo_k8s_node_lists_total %llu\n", (unsigned long long)stats.lists);
	header(text, "velo_k8s_node_relists_total", "counter",
	       "LISTs after the first (410 Gone: the watch could not resume).");
	fprintf(text, "velo_k8s_node_relists_total %llu\n", (unsigned long long)stats.relists);
	header(text, "velo_k8s_watch_restarts_total", "counter",
	       "Node watches that ended (server timeout, dropped connection, error) and were "
	       "started again.");
	fprintf(text, "velo_k8s_watch_restarts_total %llu\n",
		(unsigned long long)stats.watch_restarts);
	header(text, "velo_k8s_watch_events_total", "counter",
	       "Node watch events received, bookmarks included.");
	fprintf(text, "velo_k8s_watch_events_total %llu\n", (unsigned long long)stats.events);
	header(text, "velo_k8s_errors_total", "counter",
	       "Failed Node LISTs and watches, Nodes velod could not use.");
	fprintf(text, "velo_k8s_errors_total %llu\n", (unsigned long long)stats.errors);
}

char *hostgw_metrics(const struct agent *agent)
{
	char *out = NULL;
	size_t len = 0;
	FILE *text;

	if (!agent_hostgw_on(&agent->config))
		return NULL;
	text = open_memstream(&out, &len);
	if (!text)
		return NULL;
	if (agent->hostgw.backend) {
		header(text, "velo_routing_mode", "gauge",
		       "The routing backend routingMode picked (label mode).");
		fprintf(text, "velo_routing_mode{mode=\"%s\"} 1\n", agent->hostgw.backend->name);
	}
	header(text, "velo_hostgw_routes", "gauge",
	       "Routes to other nodes' pod CIDRs the last host-gw pass installed.");
	fprintf(text, "velo_hostgw_routes %u\n", agent->hostgw.routes);
	header(text, "velo_hostgw_syncs_total", "counter", "host-gw passes over the node list.");
	fprintf(text, "velo_hostgw_syncs_total %llu\n", (unsigned long long)agent->hostgw.syncs);
	header(text, "velo_hostgw_errors_total", "counter",
	       "Node-list errors, claimed own CIDRs, unreachable next hops, failed route changes.");
	fprintf(text, "velo_hostgw_errors_total %llu\n", (unsigned long long)agent->hostgw.errors);
	routing_paths_metrics(text);
	if (agent->hostgw.watch)
		put_node_watch(agent->hostgw.watch, text);
	if (fclose(text)) {
		free(out);
		return NULL;
	}
	return out;
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
