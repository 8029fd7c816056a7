// SPDX-License-Identifier: Apache-2.0
/*
 * The Node watch (k8s_nodes.h): the node list as a resource of the shared
 * watch (k8s_watch.c). The thread edits current (a LIST fills scratch, which
 * then becomes current); publishing copies current to shared, which velod's
 * loop takes. Only a change of a node's name, pod CIDRs or InternalIPs
 * publishes: status heartbeats don't wake the loop.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_node_list.h"
#include "k8s_nodes.h"
#include "k8s_watch.h"

struct k8s_nodes {
	struct k8s_watch *watch;
	struct node_list *current, *scratch; /* the watch thread's */
	struct node_list *shared; /* under the watch's lock */
};

static void list_begin(void *ctx)
{
	struct k8s_nodes *nodes = ctx;

	nodes->scratch->n = 0;
}

static int list_item(void *ctx, const cJSON *object, char *why, size_t why_size)
{
	struct k8s_nodes *nodes = ctx;
	struct node node;
	int ret;

	ret = k8s_node_parse(object, &node, why, why_size);
	if (ret)
		return ret;
	ret = k8s_node_list_upsert(nodes->scratch, &node, why, why_size);
	return ret < 0 ? ret : 0;
}

static void list_end(void *ctx)
{
	struct k8s_nodes *nodes = ctx;
	struct node_list *done = nodes->current;

	nodes->current = nodes->scratch;
	nodes->scratch = done;
}

static int change(void *ctx, bool deleted, const cJSON *object, char *why, size_t why_size)
{
	struct k8s_nodes *nodes = ctx;

	return k8s_node_change(nodes->current, deleted, object, why, why_size);
}

static unsigned publish(void *ctx)
{
	struct k8s_nodes *nodes = ctx;

	nodes->shared->n = nodes->current->n;
	memcpy(nodes->shared->nodes, nodes->current->nodes,
	       nodes->current->n * sizeof(nodes->current->nodes[0]));
	return nodes->current->n;
}

static void free_nodes(struct k8s_nodes *nodes)
{
	free(nodes->current);
	free(nodes->scratch);
	free(nodes->shared);
	free(nodes);
}

struct k8s_nodes *k8s_nodes_start(const struct agent_config *config)
{
	struct k8s_resource resource = {
		.name = "nodes",
		.path = "/api/v1/nodes",
		.list_begin = list_begin,
		.list_item = list_item,
		.list_end = list_end,
		.change = change,
		.publish = publish,
	};
	struct k8s_nodes *nodes = calloc(1, sizeof(*nodes));
	int ret;

	if (!nodes)
		return NULL;
	nodes->current = malloc(sizeof(*nodes->current));
	nodes->scratch = malloc(sizeof(*nodes->scratch));
	nodes->shared = malloc(sizeof(*nodes->shared));
	if (!nodes->current || !nodes->scratch || !nodes->shared) {
		free_nodes(nodes);
		errno = ENOMEM;
		return NULL;
	}
	nodes->current->n = 0;
	resource.ctx = nodes;
	nodes->watch = k8s_watch_start(&resource, config);
	if (!nodes->watch) {
		ret = errno;
		free_nodes(nodes);
		errno = ret;
		return NULL;
	}
	return nodes;
}

int k8s_nodes_fd(const struct k8s_nodes *nodes)
{
	return k8s_watch_fd(nodes->watch);
}

static void copy_list(void *ctx, void *out)
{
	struct k8s_nodes *nodes = ctx;
	struct node_list *list = out;

	list->n = nodes->shared->n;
	list->self = NULL;
	memcpy(list->nodes, nodes->shared->nodes, list->n * sizeof(list->nodes[0]));
}

int k8s_nodes_take(struct k8s_nodes *nodes, struct node_list *list)
{
	return k8s_watch_take(nodes->watch, copy_list, list);
}

void k8s_nodes_stats(struct k8s_nodes *nodes, struct k8s_watch_stats *stats)
{
	k8s_watch_stats(nodes->watch, stats);
}

void k8s_nodes_stop(struct k8s_nodes *nodes)
{
	if (!nodes)
		return;
	k8s_watch_stop(nodes->watch);
	free_nodes(nodes);
}
