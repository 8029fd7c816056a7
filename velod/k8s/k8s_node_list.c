// SPDX-License-Identifier: Apache-2.0
/*
 * Node objects into host-gw's node list: parsing a Node, and editing the list
 * by the watch's events (k8s_node_list.h). No I/O: the watch thread
 * (k8s_list_watch.c) and the unit tests feed it text.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "k8s_event.h"
#include "k8s_node_list.h"

static const cJSON *field(const cJSON *object, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(object, name);
}

static int node_cidr(const cJSON *item, struct node *node, char *why, size_t why_size)
{
	if (!cJSON_IsString(item) || node->n_cidrs == HOSTGW_MAX_CIDRS ||
	    velo_cidr_parse(item->valuestring, &node->cidrs[node->n_cidrs])) {
		snprintf(why, why_size, "node %s: bad spec.podCIDRs entry", node->name);
		return -EINVAL;
	}
	node->n_cidrs++;
	return 0;
}

int k8s_node_parse(const cJSON *json, struct node *node, char *why, size_t why_size)
{
	const cJSON *name = field(field(json, "metadata"), "name");
	const cJSON *spec = field(json, "spec"), *cidrs = field(spec, "podCIDRs");
	const cJSON *item;
	int ret;

	memset(node, 0, sizeof(*node));
	if (!cJSON_IsString(name) || !name->valuestring[0] ||
	    strlen(name->valuestring) >= sizeof(node->name)) {
		snprintf(why, why_size, "a Node without a usable metadata.name");
		return -EINVAL;
	}
	snprintf(node->name, sizeof(node->name), "%s", name->valuestring);
	if (cJSON_GetArraySize(cidrs) > 0) {
		cJSON_ArrayForEach (item, cidrs) {
			ret = node_cidr(item, node, why, why_size);
			if (ret)
				return ret;
		}
	} else if (cJSON_IsString(field(spec, "podCIDR")) &&
		   field(spec, "podCIDR")->valuestring[0]) {
		ret = node_cidr(field(spec, "podCIDR"), node, why, why_size);
		if (ret)
			return ret;
	}
	/* The first InternalIP of each family; other address types never carry pod traffic. */
	cJSON_ArrayForEach (item, field(field(json, "status"), "addresses")) {
		const cJSON *type = field(item, "type"), *address = field(item, "address");
		struct velo_cidr addr;
		bool known = false;

		if (!cJSON_IsString(type) || strcmp(type->valuestring, "InternalIP"))
			continue;
		if (!cJSON_IsString(address) || strchr(address->valuestring, '/') ||
		    velo_cidr_parse(address->valuestring, &addr)) {
			snprintf(why, why_size, "node %s: bad InternalIP in status.addresses",
				 node->name);
			return -EINVAL;
		}
		for (unsigned i = 0; i < node->n_addrs; i++)
			known |= node->addrs[i].family == addr.family;
		if (!known)
			memcpy(&node->addrs[node->n_addrs++], &addr, sizeof(addr));
	}
	return 0;
}

static struct node *find_node(struct node_list *list, const char *name)
{
	for (unsigned i = 0; i < list->n; i++)
		if (!strcmp(list->nodes[i].name, name))
			return &list->nodes[i];
	return NULL;
}

/* Nodes are compared whole (parse zeroes them, memcpy keeps padding). */
int k8s_node_list_upsert(struct node_list *list, const struct node *node, char *why,
			 size_t why_size)
{
	struct node *slot = find_node(list, node->name);

	if (slot && !memcmp(slot, node, sizeof(*node)))
		return 0;
	if (!slot) {
		if (list->n == HOSTGW_MAX_NODES) {
			snprintf(why, why_size, "more than %d nodes: %s left out", HOSTGW_MAX_NODES,
				 node->name);
			return -ENOSPC;
		}
		slot = &list->nodes[list->n++];
	}
	memcpy(slot, node, sizeof(*node));
	return 1;
}

int k8s_node_list_remove(struct node_list *list, const char *name)
{
	struct node *slot = find_node(list, name);

	if (!slot)
		return 0;
	list->n--;
	if (slot != &list->nodes[list->n])
		memcpy(slot, &list->nodes[list->n], sizeof(*slot));
	return 1;
}

int k8s_node_change(void *list, bool deleted, const cJSON *object, char *why, size_t why_size)
{
	struct node node;
	int ret;

	ret = k8s_node_parse(object, &node, why, why_size);
	if (ret)
		return ret;
	if (deleted)
		return k8s_node_list_remove(list, node.name);
	return k8s_node_list_upsert(list, &node, why, why_size);
}

int k8s_nodes_apply_event(struct node_list *list, const char *line, size_t len, char *rv,
			  size_t rv_size, char *why, size_t why_size)
{
	return k8s_event_apply(line, len, rv, rv_size, k8s_node_change, list, why, why_size);
}
