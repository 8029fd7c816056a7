// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * tc ingress on a pod's host-side veth (tcx or clsact): anti-spoofing, and
 * for TCP/UDP to a local destination pod with the shortcut on, unless
 * conntrack has NAT on the flow, the router's rewrite and bpf_redirect_peer()
 * straight into the destination pod's netns. The skb keeps GSO/TSO and
 * checksum offload. Everything else goes to the stack, and so does a new flow
 * to a pod whose NetworkPolicy isolates it (its own veth's programs judge it).
 *
 * With velod's crossNodeTc, the sending half of the cross-node shortcut too
 * (lib/cross_node.h): TCP/UDP from this pod to another node's pod leaves by
 * the uplink by a redirect, past this node's
 * routing and netfilter; uplink_tc.bpf.c carries the replies in.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/conntrack.h"
#include "lib/cross_node.h"
#include "lib/flow_pkt.h"
#include "lib/l3.h"
#include "lib/maps.h"
#include "lib/parse.h"
#include "lib/policy.h"
#include "lib/tc.h"

#define VELO_AF_INET 2
#define VELO_AF_INET6 10

char LICENSE[] SEC("license") = "GPL";

/* To the stack; a packet whose source was checked says so to velod's source guard. */
static __always_inline int velo_tc_pass(struct __sk_buff *skb, const struct velo_pkt *pkt)
{
	if (pkt->check_src)
		skb->mark |= VELO_MARK_SOURCE_CHECKED;
	velo_count(VELO_STAT_TC_PASS);
	return TC_ACT_OK;
}

static __always_inline int velo_tc_cross_pass(struct __sk_buff *skb, const struct velo_pkt *pkt,
					      __u32 stat)
{
	velo_cross_count(stat, skb->len);
	return velo_tc_pass(skb, pkt);
}

/* The route lookup's question: the packet's addresses and ports, arriving on in_ifindex. */
static __always_inline void velo_tc_fib_params(const struct velo_pkt *pkt, __u32 in_ifindex,
					       struct bpf_fib_lookup *fib)
{
	fib->ifindex = in_ifindex;
	fib->l4_protocol = pkt->l4proto;
	fib->sport = pkt->sport;
	fib->dport = pkt->dport;
	if (pkt->family == 4) {
		fib->family = VELO_AF_INET;
		__builtin_memcpy(&fib->ipv4_src, &pkt->src.addr[12], 4);
		__builtin_memcpy(&fib->ipv4_dst, &pkt->dst.addr[12], 4);
	} else {
		fib->family = VELO_AF_INET6;
		__builtin_memcpy(fib->ipv6_src, pkt->src.addr, 16);
		__builtin_memcpy(fib->ipv6_dst, pkt->dst.addr, 16);
	}
}

/*
 * The sending half of the cross-node shortcut (lib/cross_node.h): a packet
 * of this pod to another node's pod leaves by the uplink velod gave the
 * remote CIDR, where the receiving half runs, whatever the route lookup
 * says: a route that said "not this way" for one direction of a flow and not
 * the other would split the flow across conntrack. When the route leaves by
 * that uplink and knows the next hop's MAC, the redirect takes them; else
 * bpf_redirect_neigh() finds the next hop on the uplink itself.
 * velo_pol_from ran before this program: the sender's policy has judged the
 * packet. src: the sender's endpoint entry, as the source check found it.
 */
static __always_inline int velo_tc_cross(struct __sk_buff *skb, const struct velo_pkt *pkt,
					 const struct velo_endpoint *src)
{
	const struct velo_remote *remote = velo_cross_remote(&pkt->dst);
	struct bpf_fib_lookup fib = {};
	void *data, *data_end;
	struct ethhdr *eth;
	__u32 mtu_len = 0;

	if (!remote || pkt->ttl <= 1 || !velo_cross_pod(src))
		return velo_tc_pass(skb, pkt);
	if (velo_cross_pending(&pkt->src))
		return velo_tc_cross_pass(skb, pkt, VELO_CROSS_TX_PASS_PENDING);
	if (VELO_CT_CHECK(bpf_skb_ct_lookup, skb, pkt) != VELO_CT_DIRECT)
		return velo_tc_cross_pass(skb, pkt, VELO_CROSS_TX_PASS_CT);
	/* GSO packets pass when their segments fit. Oversize: the stack sends the ICMP error. */
	if (bpf_check_mtu(skb, remote->uplink_ifindex, &mtu_len, 0, 0))
		return velo_tc_cross_pass(skb, pkt, VELO_CROSS_TX_PASS_MTU);
	velo_tc_fib_params(pkt, skb->ifindex, &fib);
	if (bpf_fib_lookup(skb, &fib, sizeof(fib), 0) != BPF_FIB_LKUP_RET_SUCCESS ||
	    fib.ifindex != remote->uplink_ifindex)
		fib.ifindex = 0;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end || velo_l3_hop(data, data_end, pkt))
		return velo_tc_pass(skb, pkt);
	velo_cross_count(VELO_CROSS_TX_REDIRECT, skb->len);
	if (!fib.ifindex) {
		velo_cross_count(VELO_CROSS_TX_NEIGH, skb->len);
		return bpf_redirect_neigh(remote->uplink_ifindex, NULL, 0, 0);
	}
	__builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
	return bpf_redirect(fib.ifindex, 0);
}

SEC("tc")
int velo_tc_ingress(struct __sk_buff *skb)
{
	const struct velo_endpoint *dst = NULL, *src;
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
	if (velo_l3_spoofed(data, &pkt, ifindex, &src)) {
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
		return velo_tc_cross(skb, &pkt, src);
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
