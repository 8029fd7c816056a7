// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * XDP on a pod's host-side veth: anti-spoofing, and for TCP/UDP to a local
 * destination pod that can take XDP redirects, unless conntrack has NAT on
 * the flow, the router's rewrite and bpf_redirect_map() into velo_xdp_tx_v1.
 * Each devmap entry carries velo_xdp_dst, which the kernel runs per
 * destination when it flushes the bulk queue. Fragments, non-IP, other
 * protocols, NATed flows, TTL expiry, oversize, misses, destinations the
 * pod's egress deny list names and new flows to a pod NetworkPolicy isolates:
 * XDP_PASS.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/conntrack.h"
#include "lib/deny.h"
#include "lib/flow_pkt.h"
#include "lib/l3.h"
#include "lib/maps.h"
#include "lib/parse.h"
#include "lib/policy.h"

char LICENSE[] SEC("license") = "GPL";

static __always_inline int velo_xdp_pass(void)
{
	velo_count(VELO_STAT_XDP_PASS);
	return XDP_PASS;
}

SEC("xdp")
int velo_xdp_host(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	const struct velo_endpoint *dst = NULL, *src;
	struct velo_pol_flow flow = {};
	struct velo_pkt pkt = {};
	__u32 in_ifindex = ctx->ingress_ifindex;
	__u32 mtu_len = 0, ifindex;
	int ret;

	ret = velo_parse(data, data_end, &pkt);
	if (velo_l3_spoofed(data, &pkt, in_ifindex, &src)) {
		velo_count(VELO_STAT_XDP_SPOOF);
		velo_flow_pkt_drop(data, data_end, &pkt, VELO_FLOW_R_SPOOFED, VELO_FLOW_P_XDP,
				   in_ifindex, data_end - data);
		return XDP_DROP;
	}
	if (ret != VELO_PARSED)
		return velo_xdp_pass();
	ret = velo_l3_decide(&pkt, in_ifindex, VELO_EP_F_FASTPATH | VELO_EP_F_XDP_RX, &dst);
	if (ret == VELO_L3_TTL) {
		velo_count(VELO_STAT_TTL);
		return velo_xdp_pass();
	}
	if (ret != VELO_L3_FORWARD || !dst)
		return velo_xdp_pass();
	/*
	 * A redirect skips tc ingress, where velo_tc_deny enforces the deny list
	 * for frames (AF_PACKET's too): leave denied ones to it, the one place
	 * that decides and drops, rather than judging them twice.
	 */
	if (velo_deny_listed(in_ifindex, &pkt.dst))
		return velo_xdp_pass();
	if (VELO_CT_CHECK(bpf_xdp_ct_lookup, ctx, &pkt) != VELO_CT_DIRECT)
		return velo_xdp_pass();
	/* A redirect skips the destination's tc egress, where its NetworkPolicy is judged. */
	velo_pol_flow_of(&pkt, &flow);
	if (!velo_pol_shortcut_ok(&flow, true))
		return velo_xdp_pass();
	ifindex = dst->ifindex;
	/* Rewrite only what will surely be redirected: a frame passed after it would be lost. */
	if (!bpf_map_lookup_elem(&velo_xdp_tx_v1, &ifindex))
		return velo_xdp_pass();
	if (bpf_check_mtu(ctx, ifindex, &mtu_len, 0, 0)) {
		velo_count(VELO_STAT_MTU);
		return velo_xdp_pass();
	}
	if (velo_l3_rewrite(data, data_end, &pkt, dst))
		return velo_xdp_pass();
	velo_count(VELO_STAT_XDP_REDIRECT);
	return bpf_redirect_map(&velo_xdp_tx_v1, ifindex, XDP_DROP);
}

/* Runs at bulk-queue flush, once per frame, for the destination it was queued to. */
SEC("xdp/devmap")
int velo_xdp_dst(struct xdp_md *ctx)
{
	struct velo_dst_counters *counters, zero = {};
	__u32 ifindex = ctx->egress_ifindex;

	counters = bpf_map_lookup_elem(&velo_dst_v1, &ifindex);
	if (!counters) {
		bpf_map_update_elem(&velo_dst_v1, &ifindex, &zero, BPF_NOEXIST);
		counters = bpf_map_lookup_elem(&velo_dst_v1, &ifindex);
		if (!counters)
			return XDP_PASS;
	}
	counters->packets++;
	counters->bytes += ctx->data_end - ctx->data;
	return XDP_PASS;
}
