/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NetworkPolicy and ClusterNetworkPolicy as velod computed them, for people (describe.c): velod's
 * GET /policy answers, which veloctl policy prints (docs/policy.md). Pure.
 */
#ifndef VELO_POLICY_DESCRIBE_H
#define VELO_POLICY_DESCRIBE_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "policy/table.h"

/*
 * One pod: {pod, addresses, identity (a pod of this node), isolation {ingress,
 * egress}, policies [{namespace, name, policyTypes}], ingress [{from, ports,
 * policy}], egress [{to, ports, policy}], clusterNetworkPolicies [{name, tier,
 * priority, ingress, egress (rule counts), problem}] in evaluation order};
 * peers and ports as text, [] for every one. NULL with errno ENOENT when no Pod has that name, ENOMEM.
 */
cJSON *velo_pol_describe_pod(const struct velo_pol_objects *objects,
			     const struct velo_pol_node *node, const struct velo_pol_tables *tables,
			     const char *ns, const char *name);
/* This node's pods: {pods: [{pod, isolation, policies}]}. NULL with errno ENOMEM. */
cJSON *velo_pol_describe_node(const struct velo_pol_objects *objects,
			      const struct velo_pol_node *node);
/*
 * What a policy drop charged to identity ran into (flows): the NetworkPolicies
 * that isolate identity's pods for ingress (else egress), "ns/name,ns/name"
 * into buf (cut short when it doesn't fit). Their number; 0 when no pod of
 * this node has that identity in tables.
 */
unsigned velo_pol_isolating(const struct velo_pol_objects *objects,
			    const struct velo_pol_tables *tables, __u32 identity, bool ingress,
			    char *buf, size_t len);

#endif
