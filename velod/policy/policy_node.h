/* SPDX-License-Identifier: Apache-2.0 */
/*
 * This node for NetworkPolicy (policy_node.c): its pods as the endpoint
 * records have them (a new pod is known as soon as its record has
 * addresses, before the API shows them) and its own addresses.
 */
#ifndef VELOD_POLICY_POLICY_NODE_H
#define VELOD_POLICY_POLICY_NODE_H

#include "policy/table.h"
#include "agent/agent.h"

struct policy_node_pods {
	struct velo_pol_local_pod *local; /* the caller frees it */
	unsigned n, cap;
};

/* This node's pods from every network's records (ADDs in flight included): 0 or -errno. */
int policy_node_pods(const struct agent_config *config, struct policy_node_pods *pods);
/* The node's own addresses (kubelet's probes come from them), link-local ones aside. */
unsigned policy_node_addrs(struct velo_pol_cidr *out, unsigned max);

#endif
