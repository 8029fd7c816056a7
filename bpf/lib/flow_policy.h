/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Policy's drops as flow events: policy's reasons (enum velo_pol_reason)
 * mapped onto the flow table's, with the identity of the pod whose policy
 * said no (velod names the pod and the policies that select it); and what an
 * audited policy would have dropped, as AUDIT events.
 */
#ifndef VELO_BPF_FLOW_POLICY_H
#define VELO_BPF_FLOW_POLICY_H

#include "lib/flow.h"
#include "lib/policy.h"

static __always_inline __u8 velo_flow_pol_reason(__u32 pol_reason)
{
	switch (pol_reason) {
	case VELO_POL_DROP_EGRESS:
		return VELO_FLOW_R_POLICY_EGRESS;
	case VELO_POL_DROP_INGRESS:
		return VELO_FLOW_R_POLICY_INGRESS;
	case VELO_POL_DROP_PENDING:
		return VELO_FLOW_R_POLICY_PENDING;
	default:
		return VELO_FLOW_R_POLICY_SPOOFED;
	}
}

static __always_inline void velo_flow_pol_tuple(struct velo_flow_event *event,
						const struct velo_pol_flow *flow, __u32 ifindex)
{
	__builtin_memcpy(event->saddr, flow->key.saddr, 16);
	__builtin_memcpy(event->daddr, flow->key.daddr, 16);
	event->sport = flow->key.sport;
	event->dport = flow->key.dport;
	event->proto = flow->key.proto;
	event->ifindex = ifindex;
	event->len = flow->len;
}

/* A flow an audited policy would have dropped: passed, and named (lib/policy.h's audit). */
static __always_inline void velo_flow_pol_audit(const struct velo_pol_flow *flow,
						const struct velo_pol_audit *audit, __u32 ifindex)
{
	struct velo_flow_event *event;

	event = velo_flow_reserve(VELO_FLOW_AUDIT, velo_flow_pol_reason(audit->reason),
				  VELO_FLOW_P_TC);
	if (!event)
		return;
	velo_flow_pol_tuple(event, flow, ifindex);
	event->identity = audit->identity;
	event->policy = audit->policy;
	velo_flow_submit(event);
}

static __always_inline void velo_flow_pol_drop(const struct velo_pol_flow *flow, __u32 pol_reason,
					       __u32 ifindex)
{
	const struct velo_pol_ip *ip;
	struct velo_flow_event *event;
	__u8 reason = velo_flow_pol_reason(pol_reason);

	event = velo_flow_reserve_drop(reason, VELO_FLOW_P_TC);
	if (!event)
		return;
	velo_flow_pol_tuple(event, flow, ifindex);
	/* Ingress: the receiver's policy said no; otherwise the sender's. */
	ip = velo_pol_ip_of(pol_reason == VELO_POL_DROP_INGRESS ? flow->key.daddr
								: flow->key.saddr);
	if (ip)
		event->identity = ip->pod_id;
	velo_flow_submit(event);
}

#endif
