/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NetworkPolicy's maps as the BPF programs (bpf/policy.bpf.c, lib/policy.h)
 * and velod (which computes them) share them. Policy is identity based:
 * every address has up to two identities, the label set of the pod behind
 * it (pod_id) and the longest prefix any ipBlock names that holds it
 * (cidr_id); rules allow a subject identity to talk to a peer identity on a
 * protocol and port range. A subject is the label set of a selected pod:
 * namespace, labels and named ports (so a named port resolves per pod).
 */
#ifndef VELO_POLICY_H
#define VELO_POLICY_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define VELO_MAP_POL_IP "velo_pol_ip_v1"
#define VELO_MAP_POL_SUBJECT "velo_pol_sub_v1"
#define VELO_MAP_POL_RULES "velo_pol_rule_v1"
#define VELO_MAP_POL_STATE "velo_pol_st_v1"
#define VELO_MAP_POL_IF "velo_pol_if_v1"
#define VELO_MAP_POL_CT "velo_pol_ct_v1"
#define VELO_MAP_POL_DROPS "velo_pol_drop_v1"
#define VELO_MAP_POL_FRAG "velo_pol_frag_v1"
#define VELO_MAP_POL_TIER "velo_pol_tier_v1"

#define VELO_PROG_POL_FROM_POD "velo_pol_from"
#define VELO_PROG_POL_TO_POD "velo_pol_to"
#define VELO_PROG_POL_UPLINK "velo_pol_uplink"

#ifndef VELO_MAX_POL_IPS
#define VELO_MAX_POL_IPS 131072
#endif
#ifndef VELO_MAX_POL_SUBJECTS
#define VELO_MAX_POL_SUBJECTS 16384
#endif
#ifndef VELO_MAX_POL_RULES
#define VELO_MAX_POL_RULES 262144
#endif
#ifndef VELO_MAX_POL_TIER_RULES
#define VELO_MAX_POL_TIER_RULES 262144
#endif
#ifndef VELO_MAX_POL_CT
#define VELO_MAX_POL_CT 262144
#endif
#ifndef VELO_MAX_POL_IFS
#define VELO_MAX_POL_IFS 4096
#endif
/* Fragmented datagrams in flight whose first fragment was seen. */
#ifndef VELO_MAX_POL_FRAGS
#define VELO_MAX_POL_FRAGS 8192
#endif

/* Identities. Pod label sets from VELO_ID_POD_FIRST, ipBlock prefixes from VELO_ID_CIDR_FIRST. */
enum {
	VELO_ID_NONE = 0, /* no entry: velod hasn't placed the address yet */
	VELO_ID_WORLD = 1, /* an address no pod and no ipBlock holds */
	VELO_ID_HOST = 2, /* this node's own addresses: kubelet probes, always allowed */
	VELO_ID_POD_FIRST = 256,
	VELO_ID_CIDR_FIRST = 1u << 24,
	VELO_ID_ANY = 0xffffffffu, /* a rule's peer: every address (an empty from/to) */
};

/*
 * velo_pol_ip_v1 (LPM trie): an address -> its identities. Pod addresses are
 * full-length entries, ipBlock prefixes shorter ones; velod writes a pod's
 * entry with the cidr_id of the longest ipBlock prefix holding it, so one
 * lookup answers both. IPv4 as ::ffff:a.b.c.d (prefixlen 96 + v4 prefix).
 */
struct velo_pol_ip_key {
	__u32 prefixlen;
	__u8 addr[16];
};

/* velo_pol_ip.flags */
enum {
	VELO_POL_IP_LOCAL = 1u << 0, /* a pod on this node */
	VELO_POL_IP_SERVICE = 1u << 1, /* a Service's cluster IP: kube-proxy DNATs it later */
};

struct velo_pol_ip {
	__u32 pod_id; /* VELO_ID_NONE when no pod has the address */
	__u32 cidr_id; /* VELO_ID_WORLD when no ipBlock prefix holds it */
	__u32 flags; /* VELO_POL_IP_* */
	__u32 pad;
};

/*
 * velo_pol_sub_v1 (hash): subject identity -> which directions some
 * NetworkPolicy isolates, and in which directions some ClusterNetworkPolicy
 * of either tier selects it with rules (velo_pol_tier_v1 has them).
 */
enum {
	VELO_POL_ISOLATE_INGRESS = 1u << 0,
	VELO_POL_ISOLATE_EGRESS = 1u << 1,
	VELO_POL_ADMIN_INGRESS = 1u << 2,
	VELO_POL_ADMIN_EGRESS = 1u << 3,
	VELO_POL_BASELINE_INGRESS = 1u << 4,
	VELO_POL_BASELINE_EGRESS = 1u << 5,
	/*
	 * Some audited policy selects the subject: the flags of every policy,
	 * audited ones included, are the ones above shifted by
	 * VELO_POL_SHADOW_SHIFT, their rules keyed with VELO_POL_SHADOW.
	 */
	VELO_POL_AUDIT = 1u << 6,
};
#define VELO_POL_SHADOW_SHIFT 8
/* Some policy of any tier judges (or, audited, would judge) the subject's traffic that way. */
#define VELO_POL_JUDGED_INGRESS                                                            \
	((VELO_POL_ISOLATE_INGRESS | VELO_POL_ADMIN_INGRESS | VELO_POL_BASELINE_INGRESS) * \
	 (1u | 1u << VELO_POL_SHADOW_SHIFT))
#define VELO_POL_JUDGED_EGRESS                                                          \
	((VELO_POL_ISOLATE_EGRESS | VELO_POL_ADMIN_EGRESS | VELO_POL_BASELINE_EGRESS) * \
	 (1u | 1u << VELO_POL_SHADOW_SHIFT))

struct velo_pol_subject {
	__u32 flags; /* VELO_POL_ISOLATE_*, _ADMIN_*, _BASELINE_*, _AUDIT (and shifted) */
	__u32 pad;
};

/*
 * velo_pol_rule_v1 (LPM trie): what an isolated subject allows. The trie
 * matches subject, peer and direction in full (VELO_POL_RULE_PREFIX_BASE bits),
 * then the protocol (+8: any port of it) and the port's bits: a port range is
 * written as the prefixes that cover it; prefixlen VELO_POL_RULE_PREFIX_BASE
 * alone is every protocol and port (a rule without ports). Ports in network
 * order. Packets without ports (ICMP, ...) look up port 0.
 */
enum {
	VELO_POL_DIR_INGRESS = 0,
	VELO_POL_DIR_EGRESS = 1,
	/* In dir too: a rule of the audited subject's every-policy set (VELO_POL_AUDIT). */
	VELO_POL_SHADOW = 8,
};

struct velo_pol_rule_key {
	__u32 prefixlen;
	__u32 subject; /* the selected pod's identity */
	__u32 peer; /* pod or cidr identity, or VELO_ID_ANY */
	__u8 dir; /* VELO_POL_DIR_* */
	__u8 proto; /* IPPROTO_TCP, _UDP, _SCTP, ... */
	__be16 port;
};
#define VELO_POL_RULE_PREFIX_BASE 72

struct velo_pol_rule {
	__u32 policy; /* velod's index of the policy the rule came from (flows, veloctl) */
};

/*
 * velo_pol_tier_v1 (LPM trie): ClusterNetworkPolicy rules, keyed as
 * velo_pol_rule_v1 with the tier in dir (VELO_POL_TIER_* | VELO_POL_DIR_*).
 * Rules of one tier are ordered (priority, then the policy's name, then the
 * rule's place in it): rank, lowest first. velod writes each key with the
 * best rank of every rule covering it, so the longest match of one peer
 * identity is the first rule for that peer; the programs take the best of
 * the pod, prefix and any-peer lookups: the tier's first matching rule.
 */
enum {
	VELO_POL_TIER_ADMIN = 2,
	VELO_POL_TIER_BASELINE = 4,
};

enum velo_pol_action {
	VELO_POL_ACTION_ACCEPT = 1,
	VELO_POL_ACTION_DENY = 2,
	VELO_POL_ACTION_PASS = 3,
};

struct velo_pol_tier_rule {
	__u32 rank; /* lower first */
	__u32 policy; /* velod's index of the ClusterNetworkPolicy */
	__u16 rule; /* its place in the policy's ingress or egress list */
	__u8 action; /* enum velo_pol_action */
	__u8 pad;
};

/*
 * velo_pol_st_v1 (array, one entry): the whole policy's revision, bumped by
 * velod after every change reached the maps. A connection allowed under an
 * older revision is checked again at its next packet, so a change that
 * forbids it takes effect on established flows too.
 */
struct velo_pol_state {
	__u32 revision;
	__u32 active; /* some local pod is a subject: the fast paths look at policy */
};

/* velo_pol_if_v1 (hash): host veth ifindex -> the pod behind it (what its programs enforce). */
struct velo_pol_if {
	__u8 addr4[16]; /* ::ffff:a.b.c.d, or all zero */
	__u8 addr6[16]; /* or all zero */
};

/*
 * velo_pol_ct_v1 (LRU hash): connections policy allowed, keyed the way they
 * were opened (saddr the opener: a SYN's sender, or conntrack's original
 * direction); a reply finds its entry reversed. A TCP entry goes at the RST,
 * or at the ACK of the second FIN.
 */
struct velo_pol_ct_key {
	__u8 saddr[16];
	__u8 daddr[16];
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 pad[3];
};

/* velo_pol_ct.flags */
enum {
	/* To a Service IP: the egress check waits for kube-proxy's DNAT (the backend's veth). */
	VELO_POL_CT_VIA_SERVICE = 1u << 0,
	VELO_POL_CT_FIN_OPENER = 1u << 1, /* TCP: the opener sent its FIN */
	VELO_POL_CT_FIN_PEER = 1u << 2, /* TCP: the other end sent its FIN */
	/*
	 * Judged with the opened-to end a placed pod of this node: its own veth
	 * may pass the flow on the entry. Without it that veth judges the flow
	 * again, so a pod placed later is not reached through an entry another
	 * pod's veth made while it had no identity (fail closed).
	 */
	VELO_POL_CT_DST_PLACED = 1u << 3,
};

struct velo_pol_ct {
	__u32 revision; /* velo_pol_state.revision when allowed */
	__u32 flags; /* VELO_POL_CT_* */
};

/*
 * velo_pol_frag_v1 (LRU hash): a fragmented datagram, as its first fragment
 * showed it -> that fragment's ports, which judge the later fragments (they
 * carry no L4 header). id: IPv4's 16-bit identification (network order, in
 * the first two bytes) or IPv6's 32-bit one.
 */
struct velo_pol_frag_key {
	__u8 saddr[16];
	__u8 daddr[16];
	__be32 id;
	__u8 proto;
	__u8 pad[3];
};

struct velo_pol_frag {
	__be16 sport;
	__be16 dport;
};

/* Why policy dropped a packet: velo_pol_drop_v1's key, /metrics' reason label. */
enum velo_pol_reason {
	VELO_POL_DROP_EGRESS = 1, /* no rule of the source pod's egress policies allows it */
	VELO_POL_DROP_INGRESS, /* no rule of the destination pod's ingress policies allows it */
	VELO_POL_DROP_PENDING, /* the pod's identity isn't known yet: fail closed */
	VELO_POL_DROP_SPOOFED, /* a source address that isn't the pod's */
	VELO_POL_DROP_MAX,
};

/* velo_pol_drop_v1 (per-CPU hash): drops per local pod address and reason. */
struct velo_pol_drop_key {
	__u8 addr[16];
	__u32 reason; /* enum velo_pol_reason */
};

struct velo_pol_drop {
	__u64 packets;
	__u64 bytes;
};

_Static_assert(sizeof(struct velo_pol_ip_key) == 20, "velo_pol_ip_key layout");
_Static_assert(sizeof(struct velo_pol_ip) == 16, "velo_pol_ip layout");
_Static_assert(sizeof(struct velo_pol_subject) == 8, "velo_pol_subject layout");
_Static_assert(sizeof(struct velo_pol_rule_key) == 16, "velo_pol_rule_key layout");
_Static_assert(sizeof(struct velo_pol_rule) == 4, "velo_pol_rule layout");
_Static_assert(sizeof(struct velo_pol_tier_rule) == 12, "velo_pol_tier_rule layout");
_Static_assert(sizeof(struct velo_pol_state) == 8, "velo_pol_state layout");
_Static_assert(sizeof(struct velo_pol_if) == 32, "velo_pol_if layout");
_Static_assert(sizeof(struct velo_pol_ct_key) == 40, "velo_pol_ct_key layout");
_Static_assert(sizeof(struct velo_pol_ct) == 8, "velo_pol_ct layout");
_Static_assert(sizeof(struct velo_pol_frag_key) == 40, "velo_pol_frag_key layout");
_Static_assert(sizeof(struct velo_pol_frag) == 4, "velo_pol_frag layout");
_Static_assert(sizeof(struct velo_pol_drop_key) == 20, "velo_pol_drop_key layout");
_Static_assert(sizeof(struct velo_pol_drop) == 16, "velo_pol_drop layout");

#endif
