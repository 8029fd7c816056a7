/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Naming a flow event (flows_naming.c) as it is read: the pods at either end,
 * the policies behind a policy drop or audit, the Service a connect dialled,
 * the tunnel a routed flow crossed.
 */
#ifndef VELOD_FLOWS_FLOWS_NAMING_H
#define VELOD_FLOWS_FLOWS_NAMING_H

#include <stdbool.h>
#include <stdint.h>

#include "flows_entry.h"
#include "flows_pods.h"
#include "policy/policy.h"
#include "services/services.h"

/* The last policy drop's question and velod's answer, valid while the policy didn't sync. */
struct policies_asked {
	bool valid;
	uint32_t identity;
	bool ingress;
	uint64_t syncs;
	char names[FLOW_POD_NAME_MAX];
};

/* src_pod and dst_pod: by address, or by the veth or cgroup that sent it when that says more. */
void flows_name_pods(struct flow_pods *pods, struct flow_entry *entry, uint64_t now_ns);
/*
 * policies: for a policy drop or audit, asking policy (may be NULL) once per
 * run of one flow's drops; an audit's ClusterNetworkPolicy by its number.
 */
void flows_name_policies(const struct policy *policy, struct policies_asked *asked,
			 struct flow_entry *entry);
/* service: a translated or refused connect's, from services (may be NULL). */
void flows_name_service(const struct services *services, struct flow_entry *entry);
/* tunnelled: a routed flow whose other end is a pod of a node the VXLAN tunnel reaches. */
void flows_name_path(struct flow_entry *entry);

#endif
