// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * cgroup_skb ingress and egress on a pod's own cgroup: per-pod accounting
 * and the egress deny list. skb->data starts at the IP header at both hooks.
 * Only packets that belong to one of the pod's sockets pass here: the
 * kernel's own replies (ICMP errors, RSTs of closed ports) are not seen.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/cgroup.h"
#include "lib/flow.h"

#define SK_DROP 0
#define SK_PASS 1

char LICENSE[] SEC("license") = "GPL";

/* IP plus TCP/UDP header length of the packet at skb->data; 0 when unknown. */
static __always_inline __u32 velo_headers_len(struct __sk_buff *skb)
{
	__u8 l4[13];
	__u32 l3_len;
	__u8 proto;

	if (skb->protocol == bpf_htons(VELO_ETH_P_IP)) {
		__u8 ip[10];

		if (bpf_skb_load_bytes(skb, 0, ip, sizeof(ip)))
			return 0;
		l3_len = (ip[0] & 0x0f) * 4;
		proto = ip[9];
	} else if (skb->protocol == bpf_htons(VELO_ETH_P_IPV6)) {
		__u8 ip6[7];

		if (bpf_skb_load_bytes(skb, 0, ip6, sizeof(ip6)))
			return 0;
		l3_len = 40;
		proto = ip6[6];
	} else {
		return 0;
	}
	if (proto == VELO_IPPROTO_UDP)
		return l3_len + 8;
	if (proto != VELO_IPPROTO_TCP || l3_len > 60)
		return l3_len;
	if (bpf_skb_load_bytes(skb, l3_len, l4, sizeof(l4)))
		return l3_len;
	return l3_len + (l4[12] >> 4) * 4;
}

/* Segments and L3 bytes as they are (or were) on the wire: a GSO/GRO skb counts per segment. */
static __always_inline void velo_wire_size(struct __sk_buff *skb, __u64 *packets, __u64 *bytes)
{
	__u32 segs = skb->gso_segs;

	*packets = 1;
	*bytes = skb->len;
	if (segs > 1) {
		*packets = segs;
		*bytes += (__u64)(segs - 1) * velo_headers_len(skb);
	}
}

SEC("cgroup_skb/ingress")
int velo_cg_acct_in(struct __sk_buff *skb)
{
	struct velo_cg_counters *counters = velo_cg_counters();
	__u64 packets, bytes;

	velo_wire_size(skb, &packets, &bytes);
	counters->rx_packets += packets;
	counters->rx_bytes += bytes;
	return SK_PASS;
}

SEC("cgroup_skb/egress")
int velo_cg_acct_eg(struct __sk_buff *skb)
{
	struct velo_cg_counters *counters = velo_cg_counters();
	__u64 packets, bytes;

	velo_wire_size(skb, &packets, &bytes);
	counters->tx_packets += packets;
	counters->tx_bytes += bytes;
	return SK_PASS;
}

/*
 * The destination as a deny-list key (IPv4 mapped into IPv6) of the IP header
 * at l3 (0 in cgroup programs, after the Ethernet header at tc); -1 for
 * anything else.
 */
static __always_inline int velo_deny_key_of(struct __sk_buff *skb, __u32 l3,
					    struct velo_deny_key *key)
{
	if (skb->protocol == bpf_htons(VELO_ETH_P_IP)) {
		key->addr[10] = 0xff;
		key->addr[11] = 0xff;
		return bpf_skb_load_bytes(skb, l3 + 16, &key->addr[12], 4) ? -1 : 0;
	}
	if (skb->protocol == bpf_htons(VELO_ETH_P_IPV6))
		return bpf_skb_load_bytes(skb, l3 + 24, key->addr, 16) ? -1 : 0;
	return -1;
}

/*
 * Fails closed: until velo wrote the pod's cgroup id (between attach and
 * the next syscall at ADD, before the pod runs anything) everything is dropped.
 */
SEC("cgroup_skb/egress")
int velo_cg_deny_eg(struct __sk_buff *skb)
{
	struct velo_cg_counters *counters = velo_cg_counters();
	struct velo_cg_config *config = velo_cg_config();
	struct velo_deny_key key = {};
	__u64 packets, bytes;

	if (config->flags & VELO_CG_F_READY) {
		key.prefixlen = VELO_DENY_PREFIX_BASE + 128;
		key.cgroup_id = config->cgroup_id;
		if (velo_deny_key_of(skb, 0, &key))
			return SK_PASS; /* not IP: ARP and friends don't leave through sockets */
		if (!bpf_map_lookup_elem(&velo_deny_v1, &key))
			return SK_PASS;
	}
	velo_wire_size(skb, &packets, &bytes);
	counters->deny_packets += packets;
	counters->deny_bytes += bytes;
	velo_flow_skb_drop(skb, 0,
			   config->flags & VELO_CG_F_READY ? VELO_FLOW_R_DENY_LIST
							   : VELO_FLOW_R_DENY_PENDING,
			   VELO_FLOW_P_CGROUP);
	return SK_DROP;
}

#define VELO_ETH_HLEN 14
#define VELO_TC_ACT_UNSPEC (-1) /* tcx: TCX_NEXT; clsact: the next filter */
#define VELO_TC_ACT_SHOT 2

/*
 * tc ingress of a deny-listed pod's host veth: every frame the pod sends,
 * also what an AF_PACKET socket (CAP_NET_RAW) writes past the cgroup hook.
 * Runs before the fast path's program. Unknown veth (entry not written yet,
 * or gone): dropped, failing closed like velo_cg_deny_eg.
 */
SEC("tc")
int velo_tc_deny(struct __sk_buff *skb)
{
	struct velo_deny_key key = {};
	__u32 ifindex = skb->ifindex;
	__u64 *cgroup_id;

	cgroup_id = bpf_map_lookup_elem(&velo_deny_if_v1, &ifindex);
	if (!cgroup_id) {
		velo_flow_skb_drop(skb, VELO_ETH_HLEN, VELO_FLOW_R_DENY_PENDING, VELO_FLOW_P_TC);
		return VELO_TC_ACT_SHOT;
	}
	key.prefixlen = VELO_DENY_PREFIX_BASE + 128;
	key.cgroup_id = *cgroup_id;
	if (velo_deny_key_of(skb, VELO_ETH_HLEN, &key))
		return VELO_TC_ACT_UNSPEC; /* ARP, and IP too short to have a destination */
	if (!bpf_map_lookup_elem(&velo_deny_v1, &key))
		return VELO_TC_ACT_UNSPEC;
	velo_flow_skb_drop(skb, VELO_ETH_HLEN, VELO_FLOW_R_DENY_LIST, VELO_FLOW_P_TC);
	return VELO_TC_ACT_SHOT;
}
