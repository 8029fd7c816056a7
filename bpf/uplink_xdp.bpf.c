// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * XDP on the node's uplink (velod's uplinkXdp): a UDP frame from another
 * node addressed to a local pod that takes XDP redirects (VELO_EP_F_XDP_RX:
 * it has a devmap entry and NAPI on its veth) gets the router's rewrite and
 * bpf_redirect_map() into velo_xdp_tx_v1, whose velo_xdp_dst counts it per
 * destination. Everything else, and anything conntrack has NAT on, goes to
 * the stack untouched. So does a flow to or from a pod NetworkPolicy
 * isolates until the pod's policy programs allowed it (lib/policy.h's
 * velo_pol_shortcut_ok): the redirect skips the host veth's tc egress, where
 * velo_pol_to judges what the pod receives. Shares the endpoint map, the
 * devmap and the policy maps with veth_xdp by their pins; its own counters
 * are velo_uplink_v3.
 *
 * UDP only: a TCP frame redirected here skips the node's conntrack while the
 * pod's reply leaves through the stack, so conntrack sees a SYN-ACK without its
 * SYN (or data past the window it last saw), calls it invalid, and
 * kube-proxy's FORWARD rule drops invalid packets: the connection never
 * completes. UDP has no such state. TCP to an XDP pod keeps the routed path.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/conntrack.h"
#include "lib/l3.h"
#include "lib/maps.h"
#include "lib/parse.h"
#include "lib/policy.h"
#include "lib/velo_uplink.h"

char LICENSE[] SEC("license") = "GPL";

/* The uplink's MAC, set by velod before load: frames for other hosts are not ours. */
const volatile __u8 velo_uplink_mac[ETH_ALEN];

/* Per-CPU packets and bytes by outcome (enum velo_uplink_stat). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VELO_UPLINK_STAT_MAX);
	__type(key, __u32);
	__type(value, struct velo_uplink_counters);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_uplink_v3 SEC(".maps");

static __always_inline int velo_uplink_count(__u32 stat, __u64 len, int action)
{
	struct velo_uplink_counters *counters = bpf_map_lookup_elem(&velo_uplink_v3, &stat);

	if (counters) {
		counters->packets++;
		counters->bytes += len;
	}
	return action;
}

static __always_inline bool velo_to_uplink_mac(const struct ethhdr *eth)
{
	for (int i = 0; i < ETH_ALEN; i++)
		if (eth->h_dest[i] != velo_uplink_mac[i])
			return false;
	return true;
}

SEC("xdp")
int velo_xdp_uplink(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	const struct velo_endpoint *dst = NULL;
	struct velo_pol_flow flow = {};
	__u64 len = data_end - data;
	struct velo_pkt pkt = {};
	__u32 mtu_len = 0, ifindex;
	int ret;

	if (data + ETH_HLEN > data_end)
		return velo_uplink_count(VELO_UPLINK_PASS_NOT_IP, len, XDP_PASS);
	if (!velo_to_uplink_mac(data))
		return velo_uplink_count(VELO_UPLINK_PASS_NOT_HOST, len, XDP_PASS);
	if (velo_parse(data, data_end, &pkt) != VELO_PARSED)
		return velo_uplink_count(VELO_UPLINK_PASS_NOT_IP, len, XDP_PASS);
	/* No pod's host veth has ifindex 0: every destination qualifies by its flags alone. */
	ret = velo_l3_decide(&pkt, 0, VELO_EP_F_FASTPATH | VELO_EP_F_XDP_RX, &dst);
	if (ret == VELO_L3_TTL)
		return velo_uplink_count(VELO_UPLINK_PASS_TTL, len, XDP_PASS);
	if (ret != VELO_L3_FORWARD || !dst)
		return velo_uplink_count(VELO_UPLINK_PASS_NO_POD, len, XDP_PASS);
	if (pkt.l4proto == VELO_IPPROTO_TCP)
		return velo_uplink_count(VELO_UPLINK_PASS_TCP, len, XDP_PASS);
	velo_pol_flow_of(&pkt, &flow);
	if (!velo_pol_shortcut_ok(&flow, false))
		return velo_uplink_count(VELO_UPLINK_PASS_POLICY, len, XDP_PASS);
	if (VELO_CT_CHECK(bpf_xdp_ct_lookup, ctx, &pkt) != VELO_CT_DIRECT)
		return velo_uplink_count(VELO_UPLINK_PASS_CT, len, XDP_PASS);
	ifindex = dst->ifindex;
	/* Rewrite only what will surely be redirected: a frame passed after it would be lost. */
	if (!bpf_map_lookup_elem(&velo_xdp_tx_v1, &ifindex))
		return velo_uplink_count(VELO_UPLINK_PASS_NO_POD, len, XDP_PASS);
	if (bpf_check_mtu(ctx, ifindex, &mtu_len, 0, 0))
		return velo_uplink_count(VELO_UPLINK_PASS_MTU, len, XDP_PASS);
	if (velo_l3_rewrite(data, data_end, &pkt, dst))
		return velo_uplink_count(VELO_UPLINK_PASS_NOT_IP, len, XDP_PASS);
	velo_uplink_count(VELO_UPLINK_REDIRECT, len, 0);
	return bpf_redirect_map(&velo_xdp_tx_v1, ifindex, XDP_DROP);
}
