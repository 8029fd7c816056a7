// SPDX-License-Identifier: Apache-2.0
/* Who a flow event is about (flows_naming.h): its pods, a drop's policies, its Service. */
#include <stdio.h>
#include <string.h>

#include "flows_naming.h"
#include "policy/policy_show.h"
#include "routing/routing_paths.h"

static bool spoofed(const struct velo_flow_event *event)
{
	return event->reason == VELO_FLOW_R_SPOOFED || event->reason == VELO_FLOW_R_POLICY_SPOOFED;
}

/* Dropped on the way out of the pod behind ifindex (the deny list's tc half). */
static bool from_veth_pod(const struct velo_flow_event *event)
{
	return event->ifindex && (event->reason == VELO_FLOW_R_DENY_LIST ||
				  event->reason == VELO_FLOW_R_DENY_PENDING);
}

/* A policy's egress or ingress drop: the policies that isolate the pod whose policy said no. */
void flows_name_policies(const struct policy *policy, struct policies_asked *asked,
			 struct flow_entry *entry)
{
	const struct velo_flow_event *event = &entry->event;
	bool ingress = event->reason == VELO_FLOW_R_POLICY_INGRESS;

	entry->policies[0] = '\0';
	if (!policy || !event->identity || (!ingress && event->reason != VELO_FLOW_R_POLICY_EGRESS))
		return;
	/* An audit naming a ClusterNetworkPolicy; else the NetworkPolicies isolating the pod. */
	if (event->kind == VELO_FLOW_AUDIT && event->policy) {
		policy_cnp_name(policy, event->policy, entry->policies, sizeof(entry->policies));
		return;
	}
	/* Drops come in runs of one flow (a retrying client, a flood): asked once per sync. */
	if (!asked->valid || asked->identity != event->identity || asked->ingress != ingress ||
	    asked->syncs != policy->syncs) {
		policy_isolating(policy, event->identity, ingress, asked->names,
				 sizeof(asked->names));
		asked->valid = true;
		asked->identity = event->identity;
		asked->ingress = ingress;
		asked->syncs = policy->syncs;
	}
	memcpy(entry->policies, asked->names, sizeof(entry->policies));
}

/* The sending task's cgroup, 0 when the event has none (TCP STARTs and ENDs carry a cookie). */
static uint64_t event_cgroup(const struct velo_flow_event *event)
{
	if (event->proto == 6 && (event->kind == VELO_FLOW_START || event->kind == VELO_FLOW_END))
		return 0;
	return event->cgroup_id;
}

void flows_name_service(const struct services *services, struct flow_entry *entry)
{
	const struct velo_flow_event *event = &entry->event;
	struct velo_svc_key key = { .proto = event->proto };
	const uint8_t *addr;
	const char *name;

	entry->service[0] = '\0';
	if (!flows_event_service(event, &addr, &key.port))
		return;
	memcpy(key.addr, addr, sizeof(key.addr));
	name = services ? services_port_name(services, &key) : NULL;
	if (name)
		snprintf(entry->service, sizeof(entry->service), "%s", name);
}

void flows_name_pods(struct flow_pods *pods, struct flow_entry *entry, uint64_t now_ns)
{
	if (spoofed(&entry->event))
		/* The source is a lie: the sender is the pod behind the veth it came from. */
		flow_pods_by_ifindex(pods, entry->event.ifindex, entry->src_pod,
				     sizeof(entry->src_pod), now_ns);
	else
		flow_pods_by_addr(pods, entry->event.saddr, entry->src_pod, sizeof(entry->src_pod),
				  now_ns);
	if (!entry->src_pod[0] && from_veth_pod(&entry->event))
		/* A link-local source (neighbour discovery, MLD): still the veth's pod. */
		flow_pods_by_ifindex(pods, entry->event.ifindex, entry->src_pod,
				     sizeof(entry->src_pod), now_ns);
	if (!entry->src_pod[0])
		flow_pods_by_cgroup(pods, event_cgroup(&entry->event), entry->src_pod,
				    sizeof(entry->src_pod), now_ns);
	flow_pods_by_addr(pods, entry->event.daddr, entry->dst_pod, sizeof(entry->dst_pod), now_ns);
}

void flows_name_path(struct flow_entry *entry)
{
	const struct velo_flow_event *event = &entry->event;

	/* A scan of every node per address: skipped where no node is tunnelled (host-gw). */
	entry->tunnelled = event->path == VELO_FLOW_P_ROUTED && routing_paths_tunnels() &&
			   (routing_paths_of_addr(event->daddr) == ROUTING_PATH_VXLAN ||
			    routing_paths_of_addr(event->saddr) == ROUTING_PATH_VXLAN);
}
