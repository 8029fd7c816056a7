/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Flow events as velo's BPF programs write them and velod reads them: one
 * ring buffer per node (velo_flow_rb_v2), a per-CPU count of the events it
 * had no room for, and the one table of drop reasons every program, velod's
 * metrics, veloctl and docs/flows.md share. Names live in
 * plugin/datapath/flow_names.c, in this enum's order.
 */
#ifndef VELO_FLOW_H
#define VELO_FLOW_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define VELO_MAP_FLOW_RB "velo_flow_rb_v2"
#define VELO_MAP_FLOW_LOST "velo_fl_lost_v2"
#define VELO_MAP_FLOW_UDP "velo_fl_udp_v1"
#define VELO_MAP_FLOW_PODS "velo_fl_pods_v1"

#define VELO_PROG_FLOW_SOCKOPS "velo_flow_ops"
#define VELO_PROG_FLOW_UDP_EG "velo_fl_udp_eg"
#define VELO_PROG_FLOW_UDP_IN "velo_fl_udp_in"

/* Bytes of ring buffer (a power of two pages); velod's flowRingBytes can pin another size. */
#ifndef VELO_FLOW_RB_BYTES
#define VELO_FLOW_RB_BYTES (1u << 20)
#endif
/* velo_fl_lost_v2's per-CPU counters. */
enum velo_flow_count {
	VELO_FLOW_LOST = 0, /* events the ring had no room for */
	VELO_FLOW_SAMPLED_OUT, /* drops left out while the ring was over half full */
	VELO_FLOW_N_COUNTS,
};
/* Over half full, the ring takes 1 drop in VELO_FLOW_SAMPLE, standing for them all. */
#define VELO_FLOW_SAMPLE 16
/* How often velod reads the ring at the latest (events wake it only when it fills up). */
#define VELO_FLOW_POLL_MS 100
/* TCP sockets whose start velod read and whose end it hasn't: their side (velod's table). */
#ifndef VELO_MAX_FLOW_TCP
#define VELO_MAX_FLOW_TCP 65536
#endif
/* UDP 5-tuples an opted-in pod was seen using (LRU: the oldest are forgotten first). */
#ifndef VELO_MAX_FLOW_UDP
#define VELO_MAX_FLOW_UDP 65536
#endif

/* velo_flow_event.kind */
enum velo_flow_kind {
	VELO_FLOW_DROP = 1, /* a packet or a connect velo refused */
	VELO_FLOW_START, /* a connection of an opted-in pod was established (UDP: its first datagram) */
	VELO_FLOW_END, /* ... and closed: counters each way */
	VELO_FLOW_TRACE, /* not dropped, but off the path velo chose (reason says why) */
	VELO_FLOW_AUDIT, /* passed, but an audited policy would have dropped it (reason, policy) */
	VELO_FLOW_KIND_MAX,
};

/*
 * Why velo dropped (or rerouted) something. Append only: the numbers are in
 * events already written and in veloctl's JSON.
 */
enum velo_flow_reason {
	VELO_FLOW_R_NONE = 0,
	VELO_FLOW_R_POLICY_EGRESS, /* no egress rule of the sender's policies allows it */
	VELO_FLOW_R_POLICY_INGRESS, /* no ingress rule of the receiver's policies allows it */
	VELO_FLOW_R_POLICY_PENDING, /* the pod's policy identity isn't known yet: fail closed */
	VELO_FLOW_R_POLICY_SPOOFED, /* policy's veth program: a source not the pod's */
	VELO_FLOW_R_SPOOFED, /* the fast path's anti-spoofing (tc or XDP): source IP or MAC */
	VELO_FLOW_R_DENY_LIST, /* the pod's egress deny list names the destination */
	VELO_FLOW_R_DENY_PENDING, /* the deny list isn't keyed yet (ADD in progress): fail closed */
	VELO_FLOW_R_SVC_NO_ENDPOINTS, /* connect/sendmsg to a Service without ready endpoints */
	VELO_FLOW_R_SOCKMAP_LOST, /* the sockmap peer left: the socket's data goes routed */
	VELO_FLOW_R_MAX,
};

/* velo_flow_event.path: the program that saw it, or the path a connection took. */
enum velo_flow_path {
	VELO_FLOW_P_UNKNOWN = 0,
	VELO_FLOW_P_ROUTED, /* the stack (no velo shortcut) */
	VELO_FLOW_P_TC, /* a tc program on the host veth */
	VELO_FLOW_P_XDP, /* XDP on the host veth */
	VELO_FLOW_P_CGROUP, /* a cgroup_skb program on the pod's cgroup */
	VELO_FLOW_P_SOCKET, /* a socket hook (connect, sendmsg) */
	VELO_FLOW_P_SOCKMAP, /* the socket short-circuit */
	VELO_FLOW_P_MAX,
};

/* velo_flow_event.flags */
#define VELO_FLOW_F_PASSIVE 0x1 /* TCP START: the pod's socket accepted (it is the server) */

/*
 * One event. Addresses as the endpoint map keys them (IPv4 as ::ffff:a.b.c.d),
 * ports in network order, time in CLOCK_MONOTONIC ns (bpf_ktime_get_ns).
 */
struct velo_flow_event {
	__u64 ts_ns;
	__u8 saddr[16];
	__u8 daddr[16];
	__be16 sport;
	__be16 dport;
	__u8 proto; /* IPPROTO_*; 0 when not IP */
	__u8 kind; /* enum velo_flow_kind */
	__u8 reason; /* enum velo_flow_reason */
	__u8 path; /* enum velo_flow_path */
	__u32 ifindex; /* the host veth it was seen on; 0 at socket hooks */
	__u32 identity; /* policy drops: the policy identity of the pod whose policy said no */
	__u32 len; /* drops: the packet's bytes */
	__u32 flags; /* VELO_FLOW_F_* */
	union {
		__u64 cgroup_id; /* socket hooks: the sending task's cgroup (names the pod); else 0 */
		__u64 cookie; /* TCP START and END: the socket's cookie, pairs them */
	};
	/*
	 * END: bytes the pod's socket sent / received. TCP ENDs leave the program
	 * in the socket's view (saddr local, out sent); velod turns them client ->
	 * server like their START (velod/flows_socks.h).
	 */
	__u64 bytes_out;
	__u64 bytes_in;
	__u32 segs_out; /* END: segments each way */
	__u32 segs_in;
	/* TCP START and END of a connect velo's Service translation rewrote: what it dialled. */
	__u8 svc_addr[16];
	__be16 svc_port; /* 0: not translated */
	__u16 weight; /* the events this one stands for: 1, or VELO_FLOW_SAMPLE for a sampled drop */
	__u32 policy; /* AUDIT: velod's number of the ClusterNetworkPolicy, 0: NetworkPolicies */
};

_Static_assert(sizeof(struct velo_flow_event) == 120, "velo_flow_event layout");

#endif
