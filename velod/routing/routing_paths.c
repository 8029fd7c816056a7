// SPDX-License-Identifier: Apache-2.0
/* Each node's path from the last routing pass (routing_paths.h), kept beside the pass's list. */
#include <string.h>
#include <sys/socket.h>

#include "agent/metrics_text.h"
#include "routing_paths.h"

static const struct node_list *paths_list;
static unsigned char paths[HOSTGW_MAX_NODES]; /* enum routing_path by the node's index */
static unsigned tunnelled; /* how many of them are ROUTING_PATH_VXLAN */

static const char *const path_names[] = {
	[ROUTING_PATH_HOST_GW] = "host-gw",
	[ROUTING_PATH_VXLAN] = "vxlan",
};

void routing_paths_reset(const struct node_list *list)
{
	paths_list = list;
	memset(paths, 0, sizeof(paths));
	tunnelled = 0;
}

static long index_of(const struct node *node)
{
	if (!paths_list || node < paths_list->nodes || node >= paths_list->nodes + paths_list->n)
		return -1;
	return node - paths_list->nodes;
}

void routing_paths_set(const struct node_list *list, const struct node *node,
		       enum routing_path path)
{
	long i;

	if (list != paths_list)
		return;
	i = index_of(node);
	if (i < 0)
		return;
	tunnelled += (path == ROUTING_PATH_VXLAN) - (paths[i] == ROUTING_PATH_VXLAN);
	paths[i] = (unsigned char)path;
}

bool routing_paths_tunnels(void)
{
	return tunnelled > 0;
}

enum routing_path routing_paths_get(const struct node *node)
{
	long i = index_of(node);

	return i < 0 ? ROUTING_PATH_NONE : (enum routing_path)paths[i];
}

/* addr (16 bytes, IPv4 as ::ffff:a.b.c.d) is in cidr. */
static bool cidr_has(const struct velo_cidr *cidr, const uint8_t addr[16])
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	bool v4 = !memcmp(addr, mapped, sizeof(mapped));
	const uint8_t *bytes = v4 ? addr + 12 : addr;
	unsigned bits = cidr->prefix, i = 0;

	if (v4 != (cidr->family == AF_INET))
		return false;
	for (; bits >= 8; bits -= 8, i++)
		if (bytes[i] != cidr->addr[i])
			return false;
	return !bits || !((bytes[i] ^ cidr->addr[i]) & (uint8_t)(0xff << (8 - bits)));
}

enum routing_path routing_paths_of_addr(const uint8_t addr[16])
{
	for (unsigned i = 0; paths_list && i < paths_list->n; i++) {
		const struct node *node = &paths_list->nodes[i];

		for (unsigned c = 0; paths[i] != ROUTING_PATH_NONE && c < node->n_cidrs; c++)
			if (cidr_has(&node->cidrs[c], addr))
				return (enum routing_path)paths[i];
	}
	return ROUTING_PATH_NONE;
}

void routing_paths_metrics(struct metrics_text *text)
{
	bool any = false;
	char name[512];

	for (unsigned i = 0; paths_list && i < paths_list->n; i++) {
		if (paths[i] == ROUTING_PATH_NONE)
			continue;
		if (!any)
			metrics_header(
				text, "velo_routing_node_path", "gauge",
				"How the last pass routes another node's pod CIDRs: host-gw or "
				"vxlan.");
		any = true;
		/* The API's names need no escaping; a nodesFile's might. */
		metrics_put(text, "velo_routing_node_path{node=\"%s\",path=\"%s\"} 1\n",
			    metrics_label(paths_list->nodes[i].name, name, sizeof(name)),
			    path_names[paths[i]]);
	}
}
