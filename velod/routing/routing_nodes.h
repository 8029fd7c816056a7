/* SPDX-License-Identifier: Apache-2.0 */
/* The node list every routing backend works from: read from nodesFile, this node's entry. */
#ifndef VELOD_ROUTING_ROUTING_NODES_H
#define VELOD_ROUTING_ROUTING_NODES_H

#include <stdbool.h>

#include "agent/agent.h"

/*
 * nodesFile: {"nodes": [{"name": "n1", "addresses": ["192.168.77.1", "fd00:77::1"],
 *                        "podCIDRs": ["10.77.1.0/24", "fd77:1::/64"]}, ...]}
 * config->nodes_file into list (list->self left as it is); 0 or -errno (-EINVAL: not that
 * shape).
 */
int routing_nodes_read(const struct agent_config *config, struct node_list *list);
/* Sets list->self to node_name's entry, NULL when the list lacks it. */
void routing_nodes_find_self(struct node_list *list, const char *node_name);
/* Whether cidr overlaps one of this node's own pod CIDRs (never routed away). */
bool routing_nodes_own(const struct node_list *list, const struct velo_cidr *cidr);
/* The node's address of that family, NULL when it has none. */
const struct velo_cidr *routing_nodes_address(const struct node *node, int family);

#endif
