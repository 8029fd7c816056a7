// SPDX-License-Identifier: Apache-2.0
/*
 * The Node watch (k8s_nodes.h): the node list as the state of a watch set
 * (k8s_watch_set.c) of one resource. Only a change of a node's name, pod
 * CIDRs or InternalIPs counts: status heartbeats don't wake the loop.
 */
#include <string.h>

#include "k8s_node_list.h"
#include "k8s_nodes.h"

static int parse(unsigned kind, const cJSON *json, void *node, char *why, size_t why_size)
{
	(void)kind;
	return k8s_node_parse(json, node, why, why_size);
}

static int put(unsigned kind, void *list, void *node, char *why, size_t why_size)
{
	(void)kind;
	return k8s_node_list_upsert(list, node, why, why_size);
}

static int del(unsigned kind, void *list, const char *ns, const char *name)
{
	(void)kind;
	(void)ns;
	return k8s_node_list_remove(list, name);
}

static unsigned count(unsigned kind, const void *list)
{
	(void)kind;
	return ((const struct node_list *)list)->n;
}

struct k8s_watch_set *k8s_nodes_start(const struct agent_config *config)
{
	static const struct k8s_watch_set_resource nodes = {
		.name = "nodes",
		.path = "/api/v1/nodes",
		.cluster_scoped = true,
	};
	/* A node list is plain memory: relists copy it whole. */
	static const struct k8s_watch_set_ops ops = {
		.state_size = sizeof(struct node_list),
		.object_size = sizeof(struct node),
		.parse = parse,
		.put = put,
		.del = del,
		.count = count,
	};

	return k8s_watch_set_start(&nodes, 1, &ops, config);
}

static int copy_list(const void *state, void *out)
{
	const struct node_list *list = state;
	struct node_list *copy = out;

	copy->n = list->n;
	copy->self = NULL;
	memcpy(copy->nodes, list->nodes, list->n * sizeof(list->nodes[0]));
	return 1;
}

int k8s_nodes_take(struct k8s_watch_set *nodes, struct node_list *list)
{
	return k8s_watch_set_take(nodes, copy_list, list);
}
