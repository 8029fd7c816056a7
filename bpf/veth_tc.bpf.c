// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * tc ingress on a pod's host-side veth (tcx or clsact): anti-spoofing, and
 * for TCP/UDP to a local destination pod with the shortcut on, unless
 * conntrack has NAT on the flow, the router's rewrite and bpf_redirect_peer()
 * straight into the destination pod's netns. The skb keeps GSO/TSO and
 * checksum offload. Everything else goes to the stack, and so does a new flow
 * to a pod whose NetworkPolicy isolates it (its own veth's programs judge it).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/conntrack.h"
#include "lib/flow_pkt.h"
#include "lib/l3.h"
#include "lib/maps.h"
#include "lib/parse.h"
#include "lib/policy.h"

#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
/* Headers velo reads: Ethernet, IPv6 (the larger; IPv4 options go to the stack), ports. */
#define VELO_TC_PULL (ETH_HLEN + 40 + 4)

char LICENSE[] SEC("license") = "GPL";

/* To the stack; a packet whose source was checked says so to velod's source guard. */
static __always_inline int velo_tc_pass(struct __sk_buff *skb, const struct velo_pkt *pkt)
{
	if (pkt->check_src)
		skb->mark |= VELO_MARK_SOURCE_CHECKED;
	velo_count(VELO_STAT_TC_PASS);
	return TC_ACT_OK;
}

/* Headers in paged data: make them linear, once, bounded. */
static __always_inline void velo_tc_linearize(struct __sk_buff *skb)
{
	__u32 linear = skb->data_end - skb->data;
	__u32 len = skb->len;

	if (linear < VELO_TC_PULL && len > linear)
		bpf_skb_pull_data(skb, len < VELO_TC_PULL ? len : VELO_TC_PULL);
	/* Keeps clang from folding the reloads below into ctx pointer arithmetic. */
	asm volatile("" ::: "memory");
}

SEC("tc")
int velo_tc_ingress(struct __sk_buff *skb)
{
	const struct velo_endpoint *dst = NULL;
	struct velo_pol_flow flow = {};
	struct velo_pkt pkt = {};
	__u32 ifindex = skb->ifindex;
	__u32 mtu_len = 0;
	void *data, *data_end;
	int ret;

	velo_tc_linearize(skb);
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;

	ret = velo_parse(data, data_end, &pkt);
	if (velo_l3_spoofed(data, &pkt, ifindex)) {
		velo_count(VELO_STAT_TC_SPOOF);
		velo_flow_pkt_drop(data, data_end, &pkt, VELO_FLOW_R_SPOOFED, VELO_FLOW_P_TC,
				   ifindex, skb->len);
		return TC_ACT_SHOT;
	}
	if (ret != VELO_PARSED)
		return velo_tc_pass(skb, &pkt);
	ret = velo_l3_decide(&pkt, ifindex, VELO_EP_F_FASTPATH, &dst);
	if (ret == VELO_L3_TTL) {
		velo_count(VELO_STAT_TTL);
		return velo_tc_pass(skb, &pkt);
	}
	if (ret != VELO_L3_FORWARD || !dst)
		return velo_tc_pass(skb, &pkt);
	if (VELO_CT_CHECK(bpf_skb_ct_lookup, skb, &pkt) != VELO_CT_DIRECT)
		return velo_tc_pass(skb, &pkt);
	/* A destination policy isolates takes new flows through its own veth's programs. */
	velo_pol_flow_of(&pkt, &flow);
	if (!velo_pol_shortcut_ok(&flow, false))
		return velo_tc_pass(skb, &pkt);
	/* GSO packets pass when their segments fit. Oversize: the stack sends the ICMP error. */
	if (bpf_check_mtu(skb, dst->ifindex, &mtu_len, 0, 0)) {
		velo_count(VELO_STAT_MTU);
		return velo_tc_pass(skb, &pkt);
	}
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	if (velo_l3_rewrite(data, data_end, &pkt, dst))
		return velo_tc_pass(skb, &pkt);
	velo_count(VELO_STAT_TC_REDIRECT);
	return bpf_redirect_peer(dst->ifindex, 0);
}
