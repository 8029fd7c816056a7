/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Structs and constants shared by velo's BPF programs and userspace: the
 * layout of every map value. Fixed-width types only; every size is asserted
 * so a change on one side can't silently disagree with the other. A layout
 * change bumps VELO_ABI and the _vN suffix of the maps it touches.
 */
#ifndef VELO_SHARED_H
#define VELO_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define VELO_ABI 1

/* Map names as pinned under the bpffs dir (<= 15 characters: BPF_OBJ_NAME_LEN - 1). */
#define VELO_MAP_ENDPOINTS "velo_ep_v1"
#define VELO_MAP_STATS "velo_stats_v2"
#define VELO_MAP_XDP_TX "velo_xdp_tx_v1"
#define VELO_MAP_DST_STATS "velo_dst_v1"

/* Program names (what bpftool prog show lists) and their pins under <bpffs>/progs_v<ABI>/. */
#define VELO_PROG_TC_INGRESS "velo_tc_ingress"
#define VELO_PROG_XDP_HOST "velo_xdp_host"
#define VELO_PROG_XDP_DST "velo_xdp_dst"

#ifndef VELO_MAX_ENDPOINTS
#define VELO_MAX_ENDPOINTS 65536
#endif

/*
 * skb->mark bit velo_tc_ingress sets on a packet it hands the stack after checking its source
 * (address, MAC, host veth) against the endpoint map: velod's source guard (velod/routing/
 * guard.c) lets such a packet skip its route lookup and clears the bit, in raw prerouting. A
 * pod can't set it: a packet's mark is cleared when it leaves the pod's netns.
 */
#define VELO_MARK_SOURCE_CHECKED 0x00100000u

/* Endpoint map key: the address, IPv4 as ::ffff:a.b.c.d so both families share one map. */
struct velo_ep_key {
	__u8 addr[16];
};

/* velo_endpoint.flags */
enum {
	VELO_EP_F_FASTPATH = 1u << 0, /* the pod has a shortcut on: others may redirect to it */
	VELO_EP_F_XDP_RX = 1u << 1, /* its veth can take XDP redirects (devmap entry, NAPI) */
};

/* Endpoint map value: one local pod address. */
struct velo_endpoint {
	__u64 owner; /* FNV-1a of the container id that wrote it */
	__u32 ifindex; /* the pod's host-side veth */
	__u32 flags; /* VELO_EP_F_* */
	__u8 pod_mac[6]; /* the pod's eth0 */
	__u8 host_mac[6]; /* the host-side veth */
	__u8 pad[4];
};

/* Index into velo_stats (per-CPU packet counters by outcome). */
enum velo_stat {
	VELO_STAT_TC_REDIRECT = 0, /* tc: redirected to a local pod */
	VELO_STAT_TC_PASS, /* tc: handed to the stack */
	VELO_STAT_TC_SPOOF, /* tc: dropped, source IP or MAC not the pod's */
	VELO_STAT_XDP_REDIRECT, /* xdp: redirected into the devmap */
	VELO_STAT_XDP_PASS, /* xdp: handed to the stack */
	VELO_STAT_XDP_SPOOF, /* xdp: dropped, source IP or MAC not the pod's */
	VELO_STAT_TTL, /* TTL / hop limit expires here: the stack answers */
	VELO_STAT_MTU, /* larger than the destination's MTU: the stack answers */
	VELO_STAT_NAT, /* conntrack has NAT on the flow: the stack reverses it */
	VELO_STAT_NO_CT, /* conntrack can't be asked (kfuncs missing): the stack, to be safe */
	VELO_STAT_MAX,
};

/* Per-destination counters, updated by the devmap program at bulk-queue flush. */
struct velo_dst_counters {
	__u64 packets;
	__u64 bytes;
};

_Static_assert(sizeof(struct velo_ep_key) == 16, "velo_ep_key layout");
_Static_assert(sizeof(struct velo_endpoint) == 32, "velo_endpoint layout");
_Static_assert(sizeof(struct velo_dst_counters) == 16, "velo_dst_counters layout");

/*
 * Per-pod cgroup programs (bpf/cgroup_skb.bpf.c, bpf/cgroup_sock.bpf.c),
 * attached to a pod's own cgroup only. Their state lives in cgroup storage,
 * which the kernel creates when the first program that uses it is attached
 * to a cgroup and frees when the last one is detached: keyed from userspace
 * by the cgroup id (the cgroup directory's inode number).
 */
#define VELO_MAP_CG_COUNTERS "velo_cg_cnt_v1"
#define VELO_MAP_CG_CONFIG "velo_cg_cfg_v1"
#define VELO_MAP_DENY "velo_deny_v1"
#define VELO_MAP_DENY_IF "velo_deny_if_v1"

#define VELO_PROG_CG_ACCT_IN "velo_cg_acct_in"
#define VELO_PROG_CG_ACCT_EG "velo_cg_acct_eg"
#define VELO_PROG_CG_DENY_EG "velo_cg_deny_eg"
#define VELO_PROG_CG_SOCKOPT "velo_cg_sockopt"
/* The deny list's tc half, on the host veth: what AF_PACKET sockets send skips the cgroup. */
#define VELO_PROG_TC_DENY "velo_tc_deny"

#ifndef VELO_MAX_DENY_ENTRIES
#define VELO_MAX_DENY_ENTRIES 16384
#endif
#ifndef VELO_MAX_DENY_PODS
#define VELO_MAX_DENY_PODS 4096
#endif
#define VELO_CG_TCP_CC_MAX 16 /* TCP_CA_NAME_MAX */

/*
 * A pod's traffic counters (per-CPU cgroup storage; sum the CPUs). Packets
 * count GSO/GRO super-packets by their segments (gso_segs); bytes are L3
 * (IP header included), each segment with its own headers. tx counts what
 * the pod's sockets sent, including what the deny list then dropped.
 */
struct velo_cg_counters {
	__u64 rx_packets;
	__u64 rx_bytes;
	__u64 tx_packets;
	__u64 tx_bytes;
	__u64 deny_packets; /* egress dropped by the deny list */
	__u64 deny_bytes;
	__u64 cc_rewrites; /* TCP_CONGESTION setsockopt calls rewritten */
};

/* velo_cg_config.flags */
enum {
	VELO_CG_F_READY = 1u << 0, /* userspace wrote cgroup_id: the deny list is keyed */
};

/* A pod cgroup's settings (shared cgroup storage), written by velo at ADD. */
struct velo_cg_config {
	__u64 cgroup_id; /* the pod cgroup's id: the deny list's key */
	__u32 flags; /* VELO_CG_F_* */
	__u32 pad;
	char tcp_cc[VELO_CG_TCP_CC_MAX]; /* "" leaves TCP_CONGESTION alone */
};

/*
 * Egress deny list key (LPM trie). The trie matches the bytes after
 * prefixlen: pad and cgroup_id always in full (VELO_DENY_PREFIX_BASE bits),
 * then the destination, IPv4 as ::ffff:a.b.c.d.
 */
struct velo_deny_key {
	__u32 prefixlen;
	__u32 pad; /* 0 */
	__u64 cgroup_id;
	__u8 addr[16];
};
#define VELO_DENY_PREFIX_BASE 96

_Static_assert(sizeof(struct velo_cg_counters) == 56, "velo_cg_counters layout");
_Static_assert(sizeof(struct velo_cg_config) == 32, "velo_cg_config layout");
_Static_assert(sizeof(struct velo_deny_key) == 32, "velo_deny_key layout");

#endif
