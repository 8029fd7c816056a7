/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node uplink's XDP program (bpf/uplink_xdp.bpf.c) and velod: its map,
 * its names and its counters. Fixed-width types, sizes asserted, as in
 * velo_shared.h.
 */
#ifndef VELO_UPLINK_H
#define VELO_UPLINK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* v3: VELO_UPLINK_PASS_TCP grew the array (v2: VELO_UPLINK_PASS_POLICY); velod unpins both. */
#define VELO_MAP_UPLINK_STATS "velo_uplink_v3"
#define VELO_MAP_UPLINK_STATS_V2 "velo_uplink_v2"
#define VELO_MAP_UPLINK_STATS_V1 "velo_uplink_v1"
#define VELO_PROG_XDP_UPLINK "velo_xdp_uplink"
/* The uplink's link pin, under the bpffs dir (not links/, which holds per-endpoint links). */
#define VELO_UPLINK_LINK_DIR "node_v1"
#define VELO_UPLINK_LINK_NAME "uplink_xdp"

/* Index into velo_uplink_v3: what the uplink program did with a frame. */
enum velo_uplink_stat {
	VELO_UPLINK_REDIRECT = 0, /* into a local pod's host veth through the devmap */
	VELO_UPLINK_PASS_NOT_HOST, /* not addressed to the uplink's MAC (flooded, multicast) */
	VELO_UPLINK_PASS_NOT_IP, /* not IPv4/IPv6 TCP/UDP, fragment, options, malformed */
	VELO_UPLINK_PASS_NO_POD, /* no local pod that takes XDP redirects has the address */
	VELO_UPLINK_PASS_TTL, /* TTL / hop limit expires here: the stack answers */
	VELO_UPLINK_PASS_MTU, /* larger than the pod veth's MTU: the stack answers */
	VELO_UPLINK_PASS_CT, /* conntrack has NAT on the flow, or can't be asked */
	VELO_UPLINK_PASS_POLICY, /* policy isolates an end and the flow has no current entry */
	VELO_UPLINK_PASS_TCP, /* TCP: the node's conntrack must see both directions */
	VELO_UPLINK_STAT_MAX,
};

struct velo_uplink_counters {
	__u64 packets;
	__u64 bytes; /* frame length, Ethernet header included */
};

_Static_assert(sizeof(struct velo_uplink_counters) == 16, "velo_uplink_counters layout");

#endif
