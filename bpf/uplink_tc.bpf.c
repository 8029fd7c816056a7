// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * tc ingress on the node's uplink (velod's crossNodeTc): the receiving half
 * of the cross-node shortcut (lib/cross_node.h). TCP/UDP from another node's
 * pod to a local pod with the tc shortcut, unless conntrack has NAT on the
 * flow, gets the router's rewrite and bpf_redirect_peer() into the pod's
 * netns, past this node's routing, netfilter and the pod veth's tc egress.
 * What velo_pol_to would judge there is judged here, the same way
 * (lib/policy.h's velo_pol_check): a denied packet is dropped, not handed to
 * the stack, whose conntrack must not see part of a flow. Everything else
 * goes to the stack untouched.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/conntrack.h"
#include "lib/cross_node.h"
#include "lib/flow_policy.h"
#include "lib/l3.h"
#include "lib/maps.h"
#include "lib/parse.h"
#include "lib/policy.h"
#include "lib/policy_parse.h"
#include "lib/tc.h"

#define TC_ACT_UNSPEC (-1) /* tcx: the next program, then the stack */

char LICENSE[] SEC("license") = "GPL";

/* velo_uplink_policy's flow, off the stack: with the verdict's own, it passes 512 bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct velo_pol_flow);
} velo_cross_flow SEC(".maps");

static __always_inline int velo_uplink_pass(struct __sk_buff *skb, __u32 stat)
{
	velo_cross_count(stat, skb->len);
	return TC_ACT_UNSPEC;
}

/*
 * What the pod's host veth would judge on the routed path: velo_pol_to when
 * policy isolates either end, which creates the flow's entry or names the
 * drop; nothing otherwise. 0 to deliver, else the drop reason.
 */
static __always_inline __u32 velo_uplink_policy(struct __sk_buff *skb, const struct velo_pkt *pkt,
						__u32 dst_ifindex)
{
	const __u32 either = VELO_POL_JUDGED_INGRESS | VELO_POL_JUDGED_EGRESS;
	const struct velo_pol_state *state = velo_pol_state();
	struct velo_pol_audit audit = {};
	struct velo_pol_flow *flow;
	__u32 reason, zero = 0;

	if (!state || !state->active)
		return 0;
	/* Neither end isolated: nothing to judge, and no flow to parse for it. */
	if (!velo_pol_ip_isolated(velo_pol_ip_of(pkt->src.addr), either) &&
	    !velo_pol_ip_isolated(velo_pol_ip_of(pkt->dst.addr), either))
		return 0;
	flow = bpf_map_lookup_elem(&velo_cross_flow, &zero);
	if (!flow)
		return VELO_POL_DROP_PENDING;
	__builtin_memset(flow, 0, sizeof(*flow));
	/* velo_parse took it as TCP/UDP: a policy parse that disagrees fails closed. */
	if (pol_parse(skb, flow) != POL_FLOW)
		return VELO_POL_DROP_PENDING;
	/* The pod is the destination. */
	reason = velo_pol_check(skb, flow, flow->key.daddr, &audit);
	if (reason)
		velo_flow_pol_drop(flow, reason, dst_ifindex);
	else if (audit.reason)
		velo_flow_pol_audit(flow, &audit, dst_ifindex);
	return reason;
}

/*
 * The word of the IPv6 header holding the hop limit, or 0 for IPv4 (its TTL
 * and header checksum change by opposite amounts: the sum stays).
 */
static __always_inline __u32 velo_uplink_hop_word(void *data, void *data_end,
						  const struct velo_pkt *pkt)
{
	__u32 *word = data + ETH_HLEN + 4; /* payload length, next header, hop limit */

	if (pkt->family != 6 || (void *)(word + 1) > data_end)
		return 0;
	return *word;
}

SEC("tc")
int velo_tc_uplink(struct __sk_buff *skb)
{
	const struct velo_endpoint *dst;
	const struct velo_remote *remote;
	struct velo_pkt pkt = {};
	void *data, *data_end;
	__u32 mtu_len = 0, before, after;

	velo_tc_linearize(skb);
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	if (velo_parse(data, data_end, &pkt) != VELO_PARSED)
		return velo_uplink_pass(skb, VELO_CROSS_RX_PASS_NOT_IP);
	remote = velo_cross_remote(&pkt.src);
	if (!remote || remote->uplink_ifindex != skb->ifindex)
		return velo_uplink_pass(skb, VELO_CROSS_RX_PASS_NOT_REMOTE);
	dst = bpf_map_lookup_elem(&velo_ep_v1, &pkt.dst);
	if (!velo_cross_pod(dst))
		return velo_uplink_pass(skb, VELO_CROSS_RX_PASS_NO_POD);
	if (pkt.ttl <= 1)
		return velo_uplink_pass(skb, VELO_CROSS_RX_PASS_TTL);
	if (velo_cross_pending(&pkt.dst))
		return velo_uplink_pass(skb, VELO_CROSS_RX_PASS_PENDING);
	if (VELO_CT_CHECK(bpf_skb_ct_lookup, skb, &pkt) != VELO_CT_DIRECT)
		return velo_uplink_pass(skb, VELO_CROSS_RX_PASS_CT);
	if (velo_uplink_policy(skb, &pkt, dst->ifindex)) {
		velo_cross_count(VELO_CROSS_RX_DROP_POLICY, skb->len);
		return TC_ACT_SHOT;
	}
	/* GSO packets pass when their segments fit. Oversize: the stack sends the ICMP error. */
	if (bpf_check_mtu(skb, dst->ifindex, &mtu_len, 0, 0))
		return velo_uplink_pass(skb, VELO_CROSS_RX_PASS_MTU);
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	before = velo_uplink_hop_word(data, data_end, &pkt);
	if (velo_l3_rewrite(data, data_end, &pkt, dst))
		return velo_uplink_pass(skb, VELO_CROSS_RX_PASS_NOT_IP);
	/*
	 * A NIC's CHECKSUM_COMPLETE sum covers the IPv6 header: the hop limit's
	 * change goes into it (the routed path drops the sum, skb_forward_csum).
	 */
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	after = velo_uplink_hop_word(data, data_end, &pkt);
	if (before != after)
		bpf_csum_update(skb, bpf_csum_diff(&before, 4, &after, 4, 0));
	velo_cross_count(VELO_CROSS_RX_REDIRECT, skb->len);
	return bpf_redirect_peer(dst->ifindex, 0);
}
