// SPDX-License-Identifier: Apache-2.0
/*
 * The node list every routing backend works from: nodesFile's parser (the
 * Node watch, k8s_nodes.c, fills the same struct from the API), this node's
 * entry and whether a CIDR is its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "k8s/annotations.h"
#include "agent/config.h"
#include "routing_nodes.h"

#define NODES_FILE_MAX (16 * 1024 * 1024)

static int parse_node(const cJSON *json, struct node *node)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(json, "name"), *item;

	memset(node, 0, sizeof(*node));
	if (!cJSON_IsString(name) || strlen(name->valuestring) >= sizeof(node->name))
		return -EINVAL;
	snprintf(node->name, sizeof(node->name), "%s", name->valuestring);
	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(json, "addresses")) {
		if (!cJSON_IsString(item) || node->n_addrs == 2 ||
		    velo_cidr_parse(item->valuestring, &node->addrs[node->n_addrs]))
			return -EINVAL;
		node->n_addrs++;
	}
	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(json, "podCIDRs")) {
		if (!cJSON_IsString(item) || node->n_cidrs == HOSTGW_MAX_CIDRS ||
		    velo_cidr_parse(item->valuestring, &node->cidrs[node->n_cidrs]))
			return -EINVAL;
		node->n_cidrs++;
	}
	return 0;
}

int routing_nodes_read(const struct agent_config *config, struct node_list *list)
{
	const cJSON *item;
	cJSON *root;
	char *text;
	int ret = 0;

	text = agent_read_file(config->nodes_file, NODES_FILE_MAX);
	if (!text)
		return -errno;
	root = cJSON_Parse(text);
	free(text);
	if (!root)
		return -EINVAL;
	list->n = 0;
	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(root, "nodes")) {
		if (list->n == HOSTGW_MAX_NODES || parse_node(item, &list->nodes[list->n])) {
			ret = -EINVAL;
			break;
		}
		list->n++;
	}
	cJSON_Delete(root);
	return ret;
}

void routing_nodes_find_self(struct node_list *list, const char *node_name)
{
	list->self = NULL;
	for (unsigned i = 0; i < list->n; i++)
		if (!strcmp(list->nodes[i].name, node_name))
			list->self = &list->nodes[i];
}

static bool overlaps(const struct velo_cidr *a, const struct velo_cidr *b)
{
	unsigned bits = a->prefix < b->prefix ? a->prefix : b->prefix;

	if (a->family != b->family)
		return false;
	for (unsigned i = 0; i < bits; i++) {
		uint8_t mask = (uint8_t)(0x80 >> (i % 8));

		if ((a->addr[i / 8] & mask) != (b->addr[i / 8] & mask))
			return false;
	}
	return true;
}

bool routing_nodes_own(const struct node_list *list, const struct velo_cidr *cidr)
{
	for (unsigned i = 0; list->self && i < list->self->n_cidrs; i++)
		if (overlaps(&list->self->cidrs[i], cidr))
			return true;
	return false;
}

const struct velo_cidr *routing_nodes_address(const struct node *node, int family)
{
	for (unsigned i = 0; i < node->n_addrs; i++)
		if (node->addrs[i].family == family)
			return &node->addrs[i];
	return NULL;
}
