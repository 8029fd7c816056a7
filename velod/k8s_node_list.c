// SPDX-License-Identifier: Apache-2.0
/*
 * Node objects into host-gw's node list: parsing a Node, and editing the list
 * by the watch's events (k8s_node_list.h). No I/O: the watch thread
 * (k8s_list_watch.c) and the unit tests feed it text.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

static int remove_node(struct node_list *list, const char *name)
{
	struct node *slot = find_node(list, name);

	if (!slot)
		return 0;
	list->n--;
	if (slot != &list->nodes[list->n])
		memcpy(slot, &list->nodes[list->n], sizeof(*slot));
	return 1;
}

void k8s_resource_version(const cJSON *object, char *rv, size_t rv_size)
{
	const cJSON *version = field(field(object, "metadata"), "resourceVersion");

	if (cJSON_IsString(version) && version->valuestring[0] &&
	    strlen(version->valuestring) < rv_size)
		snprintf(rv, rv_size, "%s", version->valuestring);
}

static int apply(struct node_list *list, const char *type, const cJSON *object, char *why,
		 size_t why_size)
{
	struct node node;
	int ret;

	if (!strcmp(type, "BOOKMARK"))
		return 0;
	if (!strcmp(type, "ERROR")) {
		const cJSON *code = field(object, "code"), *message = field(object, "message");

		snprintf(why, why_size, "watch ERROR event: %.150s",
			 cJSON_IsString(message) ? message->valuestring : "(no message)");
		return cJSON_IsNumber(code) && code->valueint == 410 ? -ESTALE : -EPROTO;
	}
	if (strcmp(type, "ADDED") && strcmp(type, "MODIFIED") && strcmp(type, "DELETED")) {
		snprintf(why, why_size, "watch event of unknown type %.40s", type);
		return -EPROTO;
	}
	ret = k8s_node_parse(object, &node, why, why_size);
	if (ret)
		return ret;
	if (!strcmp(type, "DELETED"))
		return remove_node(list, node.name);
	return k8s_node_list_upsert(list, &node, why, why_size);
}

int k8s_nodes_apply_event(struct node_list *list, const char *line, size_t len, char *rv,
			  size_t rv_size, char *why, size_t why_size)
{
	cJSON *event = cJSON_ParseWithLength(line, len);
	const cJSON *type = field(event, "type"), *object = field(event, "object");
	int ret;

	if (!cJSON_IsString(type) || !cJSON_IsObject(object)) {
		snprintf(why, why_size, "a watch line that is not an event");
		cJSON_Delete(event);
		return -EPROTO;
	}
	if (strcmp(type->valuestring, "ERROR"))
		k8s_resource_version(object, rv, rv_size);
	ret = apply(list, type->valuestring, object, why, why_size);
	cJSON_Delete(event);
	return ret;
}
