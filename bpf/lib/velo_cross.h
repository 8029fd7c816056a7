/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cross-node tc shortcut (velod's crossNodeTc) shared by its two halves
 * (bpf/veth_tc.bpf.c sends, bpf/uplink_tc.bpf.c receives) and velod: the map
 * of other nodes' pod CIDRs, the counters, the names. Fixed-width types,
 * sizes asserted, as in velo_shared.h.
 */
#ifndef VELO_CROSS_H
#define VELO_CROSS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define VELO_MAP_REMOTE "velo_remote_v1"
#define VELO_MAP_CROSS_STATS "velo_cross_v1"
/* The uplink program's link pin, beside uplink XDP's (velo_uplink.h). */
#define VELO_CROSS_LINK_NAME "uplink_tc"

#ifndef VELO_MAX_REMOTE_CIDRS
#define VELO_MAX_REMOTE_CIDRS 8192
#endif

/* velo_remote_v1's key: a pod CIDR of another node, IPv4 as ::ffff:a.b.c.d/(96 + len). */
struct velo_remote_key {
	__u32 prefixlen;
	__u8 addr[16];
};

/*
 * Its value: the uplink velod attached velo_tc_uplink to. The sending half
 * sends there, the receiving half takes only what arrives there.
 */
struct velo_remote {
	__u32 uplink_ifindex;
};

/* Index into velo_cross_v1: what either half did with a packet it looked at. */
enum velo_cross_stat {
	VELO_CROSS_TX_REDIRECT = 0, /* sent: a local pod's packet straight to the uplink */
	VELO_CROSS_TX_NEIGH, /* sent, of those: the next hop found by the neighbour subsystem */
	VELO_CROSS_TX_PASS_CT, /* sent: conntrack has NAT on the flow, or can't be asked */
	VELO_CROSS_TX_PASS_PENDING, /* sent: policy is on and velod hasn't placed the pod */
	VELO_CROSS_TX_PASS_MTU, /* sent: larger than the uplink's MTU: the stack answers */
	VELO_CROSS_RX_REDIRECT, /* received: straight into a local pod */
	VELO_CROSS_RX_PASS_NOT_IP, /* received: not TCP/UDP over IP without options, fragment */
	VELO_CROSS_RX_PASS_NOT_REMOTE, /* received: not from another node's pod CIDR */
	VELO_CROSS_RX_PASS_NO_POD, /* received: not to a local pod with the tc shortcut */
	VELO_CROSS_RX_PASS_TTL, /* received: TTL / hop limit expires here */
	VELO_CROSS_RX_PASS_CT, /* received: conntrack has NAT on the flow, or can't be asked */
	VELO_CROSS_RX_PASS_PENDING, /* received: policy is on and velod hasn't placed the pod */
	VELO_CROSS_RX_PASS_MTU, /* received: larger than the pod veth's MTU */
	VELO_CROSS_RX_DROP_POLICY, /* received: the pod's NetworkPolicy denies it */
	VELO_CROSS_STAT_MAX,
};

struct velo_cross_counters {
	__u64 packets;
	__u64 bytes; /* skb length, Ethernet header included */
};

_Static_assert(sizeof(struct velo_remote_key) == 20, "velo_remote_key layout");
_Static_assert(sizeof(struct velo_remote) == 4, "velo_remote layout");
_Static_assert(sizeof(struct velo_cross_counters) == 16, "velo_cross_counters layout");

#endif
