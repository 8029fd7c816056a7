/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Policy's drops as flow events: policy's reasons (enum velo_pol_reason)
 * mapped onto the flow table's, with the identity of the pod whose policy
 * said no (velod names the pod and the policies that select it).
 */
#ifndef VELO_BPF_FLOW_POLICY_H
#define VELO_BPF_FLOW_POLICY_H

#include "lib/flow.h"
#include "lib/policy.h"

static __always_inline void velo_flow_pol_drop(const struct velo_pol_flow *flow, __u32 pol_reason,
					       __u32 ifindex)
{
	const struct velo_pol_ip *ip;
	struct velo_flow_event *event;
	__u8 reason;

	switch (pol_reason) {
	case VELO_POL_DROP_EGRESS:
		reason = VELO_FLOW_R_POLICY_EGRESS;
		break;
	case VELO_POL_DROP_INGRESS:
		reason = VELO_FLOW_R_POLICY_INGRESS;
		break;
	case VELO_POL_DROP_PENDING:
		reason = VELO_FLOW_R_POLICY_PENDING;
		break;
	default:
		reason = VELO_FLOW_R_POLICY_SPOOFED;
		break;
	}
	event = velo_flow_reserve_drop(reason, VELO_FLOW_P_TC);
	if (!event)
		return;
	__builtin_memcpy(event->saddr, flow->key.saddr, 16);
	__builtin_memcpy(event->daddr, flow->key.daddr, 16);
	event->sport = flow->key.sport;
	event->dport = flow->key.dport;
	event->proto = flow->key.proto;
	event->ifindex = ifindex;
	event->len = flow->len;
	/* Ingress: the receiver's policy said no; otherwise the sender's. */
	ip = velo_pol_ip_of(pol_reason == VELO_POL_DROP_INGRESS ? flow->key.daddr
								: flow->key.saddr);
	if (ip)
		event->identity = ip->pod_id;
	velo_flow_submit(event);
}

#endif
