/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * NetworkPolicy's maps and verdict, shared by the programs on a selected
 * pod's host veth (bpf/policy.bpf.c) and the fast paths that skip them
 * (veth_tc, veth_xdp). Context free: a flow is its addresses, protocol and
 * ports. Stateful through velo_pol_ct_v1: a flow policy allowed, and its
 * replies, pass on a lookup while the policy's revision is the one they were
 * allowed under; after a change the flow is judged again, the way it was
 * opened (lib/policy_opener.h finds that out for a flow without an entry).
 */
#ifndef VELO_BPF_POLICY_H
#define VELO_BPF_POLICY_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/parse.h"
#include "lib/policy_opener.h"
#include "lib/velo_policy.h"

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, VELO_MAX_POL_IPS);
	__type(key, struct velo_pol_ip_key);
	__type(value, struct velo_pol_ip);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_pol_ip_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VELO_MAX_POL_SUBJECTS);
	__type(key, __u32);
	__type(value, struct velo_pol_subject);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_pol_sub_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, VELO_MAX_POL_RULES);
	__type(key, struct velo_pol_rule_key);
	__type(value, struct velo_pol_rule);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_pol_rule_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, VELO_MAX_POL_TIER_RULES);
	__type(key, struct velo_pol_rule_key);
	__type(value, struct velo_pol_tier_rule);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_pol_tier_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct velo_pol_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_pol_st_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VELO_MAX_POL_IFS);
	__type(key, __u32);
	__type(value, struct velo_pol_if);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_pol_if_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VELO_MAX_POL_CT);
	__type(key, struct velo_pol_ct_key);
	__type(value, struct velo_pol_ct);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_pol_ct_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, VELO_MAX_POL_IFS * 4);
	__type(key, struct velo_pol_drop_key);
	__type(value, struct velo_pol_drop);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_pol_drop_v1 SEC(".maps");

#define VELO_POL_IPPROTO_ICMP 1
#define VELO_POL_IPPROTO_ICMPV6 58

/* A flow as policy judges it: the CT key's tuple, seen from the packet's sender. */
struct velo_pol_flow {
	struct velo_pol_ct_key key;
	__u32 len; /* bytes, for the drop counters */
	bool icmp_error; /* an ICMP error: quoted is the flow of the packet it quotes */
	__u8 tcp_flags; /* TCP's flags byte (FIN, SYN, RST, ACK, ...), 0 for other protocols */
	struct velo_pol_ct_key quoted;
};

/* The verdict of a new flow, or why not. */
enum velo_pol_verdict {
	VELO_POL_ALLOW = 0,
	VELO_POL_DENY_EGRESS = VELO_POL_DROP_EGRESS,
	VELO_POL_DENY_INGRESS = VELO_POL_DROP_INGRESS,
};

static __always_inline const struct velo_pol_state *velo_pol_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&velo_pol_st_v1, &zero);
}

static __always_inline const struct velo_pol_ip *velo_pol_ip_of(const __u8 *addr)
{
	struct velo_pol_ip_key key = { .prefixlen = 128 };

	__builtin_memcpy(key.addr, addr, 16);
	return bpf_map_lookup_elem(&velo_pol_ip_v1, &key);
}

/* A pod of this node with a known identity. */
static __always_inline bool velo_pol_local_pod(const struct velo_pol_ip *ip)
{
	return ip && (ip->flags & VELO_POL_IP_LOCAL) && ip->pod_id >= VELO_ID_POD_FIRST;
}

/* A flow's key in velo_pol_rule_v1 and velo_pol_tier_v1: its protocol and port in full. */
static __always_inline struct velo_pol_rule_key
velo_pol_rule_key_of(__u32 subject, __u32 peer, __u8 dir, const struct velo_pol_flow *flow)
{
	struct velo_pol_rule_key key = {
		.prefixlen = VELO_POL_RULE_PREFIX_BASE + 24,
		.subject = subject,
		.peer = peer,
		.dir = dir,
		.proto = flow->key.proto,
		/* Ingress and egress both judge the destination's port. */
		.port = flow->key.dport,
	};

	return key;
}

static __always_inline bool velo_pol_rule(__u32 subject, __u32 peer, __u8 dir,
					  const struct velo_pol_flow *flow)
{
	struct velo_pol_rule_key key = velo_pol_rule_key_of(subject, peer, dir, flow);

	return bpf_map_lookup_elem(&velo_pol_rule_v1, &key);
}

/* The rule of one peer identity in a tier (dir: VELO_POL_TIER_* | VELO_POL_DIR_*), or NULL. */
static __always_inline const struct velo_pol_tier_rule *
velo_pol_tier_rule(__u32 subject, __u32 peer, __u8 dir, const struct velo_pol_flow *flow)
{
	struct velo_pol_rule_key key = velo_pol_rule_key_of(subject, peer, dir, flow);

	return bpf_map_lookup_elem(&velo_pol_tier_v1, &key);
}

/*
 * A tier's first matching rule, or NULL: the best rank of the pod, prefix and
 * any-peer lookups (each already the best of the rules covering its key).
 */
static __always_inline const struct velo_pol_tier_rule *
velo_pol_tier_first(__u32 subject, __u32 pod_id, __u32 cidr_id, __u8 dir,
		    const struct velo_pol_flow *flow)
{
	const struct velo_pol_tier_rule *best = NULL, *rule;

	if (pod_id != VELO_ID_NONE)
		best = velo_pol_tier_rule(subject, pod_id, dir, flow);
	rule = velo_pol_tier_rule(subject, cidr_id, dir, flow);
	if (rule && (!best || rule->rank < best->rank))
		best = rule;
	rule = velo_pol_tier_rule(subject, VELO_ID_ANY, dir, flow);
	if (rule && (!best || rule->rank < best->rank))
		best = rule;
	return best;
}

/*
 * Whether self's policies let peer talk to it (ingress) or it to peer
 * (egress), tier by tier as ClusterNetworkPolicy orders them: the Admin
 * tier's first matching rule accepts or denies (Pass, or no match, hands
 * over); then NetworkPolicy, when one isolates self in that direction: a rule
 * naming peer's pod identity, its ipBlock prefix or everyone; else the
 * Baseline tier's first matching rule (only Deny drops); else allowed. This
 * node (peer VELO_ID_HOST) is always let in, and let out unless a tier
 * decides (its nodes and networks peers can name it). dir | VELO_POL_SHADOW: with every
 * policy, audited ones too (VELO_POL_AUDIT's flags and rules). A tier's Deny
 * names its policy in *policy (0 for NetworkPolicy's isolation). Not inlined:
 * judged twice for audited pods, it would double the programs.
 */
static __noinline bool velo_pol_side_allows(const struct velo_pol_ip *self,
					    const struct velo_pol_ip *peer, __u8 key_dir,
					    const struct velo_pol_flow *flow, __u32 *policy)
{
	bool ingress = (key_dir & VELO_POL_DIR_EGRESS) == 0;
	bool shadow = (key_dir & VELO_POL_SHADOW) != 0;
	const struct velo_pol_tier_rule *first;
	const struct velo_pol_subject *subject;
	__u32 pod_id = VELO_ID_NONE, cidr_id = VELO_ID_WORLD, flags;

	*policy = 0;
	if (!self)
		return true;
	subject = bpf_map_lookup_elem(&velo_pol_sub_v1, &self->pod_id);
	if (!subject)
		return true;
	flags = shadow ? subject->flags >> VELO_POL_SHADOW_SHIFT : subject->flags;
	if (peer) {
		pod_id = peer->pod_id;
		cidr_id = peer->cidr_id;
	}
	/* The kubelet's probes: always in. */
	if (pod_id == VELO_ID_HOST && ingress)
		return true;
	if (flags & (ingress ? VELO_POL_ADMIN_INGRESS : VELO_POL_ADMIN_EGRESS)) {
		first = velo_pol_tier_first(self->pod_id, pod_id, cidr_id,
					    VELO_POL_TIER_ADMIN | key_dir, flow);
		if (first && first->action == VELO_POL_ACTION_ACCEPT)
			return true;
		if (first && first->action == VELO_POL_ACTION_DENY) {
			*policy = first->policy;
			return false;
		}
	}
	/* NetworkPolicy never keeps a pod from this node; the tiers may (nodes, networks). */
	if (pod_id == VELO_ID_HOST)
		return true;
	if (flags & (ingress ? VELO_POL_ISOLATE_INGRESS : VELO_POL_ISOLATE_EGRESS)) {
		if (pod_id != VELO_ID_NONE && velo_pol_rule(self->pod_id, pod_id, key_dir, flow))
			return true;
		if (velo_pol_rule(self->pod_id, cidr_id, key_dir, flow))
			return true;
		return velo_pol_rule(self->pod_id, VELO_ID_ANY, key_dir, flow);
	}
	if (flags & (ingress ? VELO_POL_BASELINE_INGRESS : VELO_POL_BASELINE_EGRESS)) {
		first = velo_pol_tier_first(self->pod_id, pod_id, cidr_id,
					    VELO_POL_TIER_BASELINE | key_dir, flow);
		if (first && first->action == VELO_POL_ACTION_DENY) {
			*policy = first->policy;
			return false;
		}
	}
	return true;
}

/*
 * A new flow from src to dst, both sides' policies: the sender's egress when
 * it is a pod of this node (unless it goes to a Service IP: kube-proxy picks
 * the backend later, and the backend's veth judges the flow again), the
 * receiver's ingress when it is one. *policy: the tier policy that denied.
 */
static __always_inline int velo_pol_judge(const struct velo_pol_flow *flow,
					  const struct velo_pol_ip *src,
					  const struct velo_pol_ip *dst, bool shadow, __u32 *policy)
{
	__u8 shadowed = shadow ? VELO_POL_SHADOW : 0;

	if (velo_pol_local_pod(src) && !(dst && (dst->flags & VELO_POL_IP_SERVICE)) &&
	    !velo_pol_side_allows(src, dst, VELO_POL_DIR_EGRESS | shadowed, flow, policy))
		return VELO_POL_DENY_EGRESS;
	if (velo_pol_local_pod(dst) &&
	    !velo_pol_side_allows(dst, src, VELO_POL_DIR_INGRESS | shadowed, flow, policy))
		return VELO_POL_DENY_INGRESS;
	return VELO_POL_ALLOW;
}

/* An end some audited policy selects: its every-policy verdict is asked too. */
static __always_inline bool velo_pol_audited(const struct velo_pol_ip *ip)
{
	const struct velo_pol_subject *subject;

	if (!velo_pol_local_pod(ip))
		return false;
	subject = bpf_map_lookup_elem(&velo_pol_sub_v1, &ip->pod_id);
	return subject && (subject->flags & VELO_POL_AUDIT);
}

/*
 * What an audited policy would have dropped (velo_pol_check's out): reason 0
 * when nothing; else the drop reason, the identity of the pod whose policy
 * would have said no, and the ClusterNetworkPolicy that would have (0: the
 * NetworkPolicies isolating it).
 */
struct velo_pol_audit {
	__u32 reason;
	__u32 identity;
	__u32 policy;
};

static __always_inline void velo_pol_ct_reverse(const struct velo_pol_ct_key *key,
						struct velo_pol_ct_key *rev)
{
	__builtin_memcpy(rev->saddr, key->daddr, 16);
	__builtin_memcpy(rev->daddr, key->saddr, 16);
	rev->sport = key->dport;
	rev->dport = key->sport;
	rev->proto = key->proto;
}

/* The flow's entry, either way round; *reply says which. */
static __always_inline struct velo_pol_ct *
velo_pol_ct_find(const struct velo_pol_flow *flow, struct velo_pol_ct_key *rev, bool *reply)
{
	struct velo_pol_ct *ct;

	*reply = false;
	ct = bpf_map_lookup_elem(&velo_pol_ct_v1, &flow->key);
	if (ct)
		return ct;
	velo_pol_ct_reverse(&flow->key, rev);
	*reply = true;
	return bpf_map_lookup_elem(&velo_pol_ct_v1, rev);
}

/* Whether the flow key names (either way round) has an entry of the current revision. */
static __always_inline bool velo_pol_ct_key_current(const struct velo_pol_ct_key *key,
						    __u32 revision)
{
	struct velo_pol_ct_key rev = {};
	struct velo_pol_ct *ct;

	ct = bpf_map_lookup_elem(&velo_pol_ct_v1, key);
	if (!ct) {
		velo_pol_ct_reverse(key, &rev);
		ct = bpf_map_lookup_elem(&velo_pol_ct_v1, &rev);
	}
	return ct && ct->revision == revision;
}

/* Whether the flow has an entry of the current revision: what the fast paths ask. */
static __always_inline bool velo_pol_ct_current(const struct velo_pol_flow *flow, __u32 revision)
{
	struct velo_pol_ct_key rev = {};
	struct velo_pol_ct *ct;
	bool reply;

	ct = velo_pol_ct_find(flow, &rev, &reply);
	return ct && ct->revision == revision;
}

static __always_inline void velo_pol_count_drop(const __u8 *addr, __u32 reason, __u32 len)
{
	struct velo_pol_drop_key key = { .reason = reason };
	struct velo_pol_drop *drop, zero = {};

	__builtin_memcpy(key.addr, addr, 16);
	drop = bpf_map_lookup_elem(&velo_pol_drop_v1, &key);
	if (!drop) {
		bpf_map_update_elem(&velo_pol_drop_v1, &key, &zero, BPF_NOEXIST);
		drop = bpf_map_lookup_elem(&velo_pol_drop_v1, &key);
		if (!drop)
			return;
	}
	drop->packets++;
	drop->bytes += len;
}

/*
 * A TCP entry's end: the RST, or the ACK that answers the second FIN (what
 * comes later, a retransmission, is judged again). A SYN on the tuple of a
 * closing entry opens a new connection. reply: the packet goes against the
 * entry's direction; key: the entry's.
 */
static __always_inline void velo_pol_ct_track(struct velo_pol_ct *ct,
					      const struct velo_pol_ct_key *key, bool reply,
					      __u8 tcp_flags)
{
	__u32 fin = reply ? VELO_POL_CT_FIN_PEER : VELO_POL_CT_FIN_OPENER;
	__u32 both = VELO_POL_CT_FIN_OPENER | VELO_POL_CT_FIN_PEER;

	if (tcp_flags & VELO_POL_TCP_RST) {
		bpf_map_delete_elem(&velo_pol_ct_v1, key);
	} else if (tcp_flags & VELO_POL_TCP_SYN) {
		ct->flags &= ~both;
	} else if (tcp_flags & VELO_POL_TCP_FIN) {
		ct->flags |= fin;
	} else if ((ct->flags & both) == both && (tcp_flags & VELO_POL_TCP_ACK)) {
		bpf_map_delete_elem(&velo_pol_ct_v1, key);
	}
}

/*
 * Whether a current entry lets the packet pass at own's veth: always, unless
 * own is the end the flow was opened to and the entry was made while it had
 * no identity (VELO_POL_CT_DST_PLACED).
 */
static __always_inline bool velo_pol_ct_holds_for(const struct velo_pol_ct *ct,
						  const struct velo_pol_flow *flow, bool reply,
						  const __u8 *own)
{
	const __u64 *dst = (const __u64 *)(reply ? flow->key.saddr : flow->key.daddr);
	const __u64 *self = (const __u64 *)own;

	if (!own || (ct->flags & VELO_POL_CT_DST_PLACED))
		return true;
	return dst[0] != self[0] || dst[1] != self[1];
}

/*
 * The verdict for a packet on a selected pod's veth: 0 to pass, else the drop
 * reason (counted against the pod whose policy said no). Replies and flows
 * already allowed pass on their entry while it is current; a stale entry is
 * judged again as the flow it was created for, and a flow without one the
 * way its opener sent it. A TCP segment of a connection nothing saw open
 * and whose ports don't tell (no entry, no SYN, unknown to conntrack, both
 * or neither port ephemeral) passes when either end may have opened it:
 * without a SYN it can't open a connection. own: the address of
 * the pod whose veth this is (NULL at the uplink), which must have an identity.
 * A new or re-judged flow an audited policy would have dropped passes, named
 * in *audit (zeroed by the caller).
 */
static __always_inline __u32 velo_pol_check(struct __sk_buff *skb, const struct velo_pol_flow *flow,
					    const __u8 *own, struct velo_pol_audit *audit)
{
	const struct velo_pol_ip *src, *dst;
	const struct velo_pol_state *state;
	struct velo_pol_ct_key rev = {};
	struct velo_pol_ct *ct, fresh = {};
	const struct velo_pol_ct_key *orig = &flow->key;
	int opener = VELO_POL_OPENER_SENDER;
	struct velo_pol_flow judged;
	__u32 policy = 0;
	bool reply;
	int verdict;

	state = velo_pol_state();
	if (!state)
		return 0;
	ct = velo_pol_ct_find(flow, &rev, &reply);
	if (ct && ct->revision == state->revision && velo_pol_ct_holds_for(ct, flow, reply, own)) {
		if (flow->tcp_flags & (VELO_POL_TCP_FIN | VELO_POL_TCP_RST | VELO_POL_TCP_SYN) ||
		    ct->flags & (VELO_POL_CT_FIN_OPENER | VELO_POL_CT_FIN_PEER))
			velo_pol_ct_track(ct, reply ? &rev : &flow->key, reply, flow->tcp_flags);
		return 0;
	}
	/*
	 * An ICMP error passes with the flow it quotes (a packet its receiver
	 * sent); quoting no allowed flow, it is judged as ICMP between its ends.
	 */
	if (flow->icmp_error && velo_pol_ct_key_current(&flow->quoted, state->revision))
		return 0;
	/* A pod velod hasn't placed yet (or a gone one) is judged by nothing: fail closed. */
	if (own) {
		const struct velo_pol_ip *self = velo_pol_ip_of(own);

		if (!self || self->pod_id < VELO_ID_POD_FIRST) {
			velo_pol_count_drop(own, VELO_POL_DROP_PENDING, flow->len);
			return VELO_POL_DROP_PENDING;
		}
	}
	if (!ct) {
		/* velo_pol_ct_find reversed the key into rev. */
		opener = velo_pol_opener(skb, &flow->key, flow->tcp_flags);
		reply = opener == VELO_POL_OPENER_RECEIVER;
	}
	if (reply)
		orig = &rev;
	__builtin_memcpy(&judged.key, orig, sizeof(judged.key));
	src = velo_pol_ip_of(judged.key.saddr);
	dst = velo_pol_ip_of(judged.key.daddr);
	verdict = velo_pol_judge(&judged, src, dst, false, &policy);
	if (verdict != VELO_POL_ALLOW && opener == VELO_POL_OPENER_UNKNOWN &&
	    flow->key.proto == VELO_POL_IPPROTO_TCP) {
		/* Either end may have opened it: try the other way round. */
		__builtin_memcpy(&judged.key, &rev, sizeof(judged.key));
		if (velo_pol_judge(&judged, dst, src, false, &policy) == VELO_POL_ALLOW) {
			const struct velo_pol_ip *other = src;

			orig = &rev;
			verdict = VELO_POL_ALLOW;
			src = dst;
			dst = other;
		}
	}
	/* Allowed, but would an audited policy have dropped it? Judged with every policy. */
	if (verdict == VELO_POL_ALLOW && (velo_pol_audited(src) || velo_pol_audited(dst))) {
		audit->reason = velo_pol_judge(&judged, src, dst, true, &policy);
		if (audit->reason) {
			const struct velo_pol_ip *denier =
				audit->reason == VELO_POL_DENY_INGRESS ? dst : src;

			audit->identity = denier ? denier->pod_id : 0;
			audit->policy = policy;
		}
	}
	if (verdict != VELO_POL_ALLOW) {
		if (ct)
			bpf_map_delete_elem(&velo_pol_ct_v1, orig);
		velo_pol_count_drop(verdict == VELO_POL_DENY_EGRESS ? orig->saddr : orig->daddr,
				    verdict, flow->len);
		return verdict;
	}
	if (ct) {
		ct->revision = state->revision;
		if (velo_pol_local_pod(dst))
			ct->flags |= VELO_POL_CT_DST_PLACED;
		velo_pol_ct_track(ct, orig, reply, flow->tcp_flags);
		return 0;
	}
	/* Its first packet, or a connection's last ones: nothing to keep. */
	if (flow->tcp_flags & (VELO_POL_TCP_FIN | VELO_POL_TCP_RST))
		return 0;
	fresh.revision = state->revision;
	if (dst && (dst->flags & VELO_POL_IP_SERVICE))
		fresh.flags = VELO_POL_CT_VIA_SERVICE;
	if (velo_pol_local_pod(dst))
		fresh.flags |= VELO_POL_CT_DST_PLACED;
	bpf_map_update_elem(&velo_pol_ct_v1, orig, &fresh, BPF_ANY);
	return 0;
}

static __always_inline bool velo_pol_ip_isolated(const struct velo_pol_ip *ip, __u32 isolate)
{
	const struct velo_pol_subject *subject;

	if (!ip)
		return false;
	subject = bpf_map_lookup_elem(&velo_pol_sub_v1, &ip->pod_id);
	return subject && (subject->flags & isolate);
}

static __always_inline bool velo_pol_isolated(const __u8 *addr, __u32 isolate)
{
	return velo_pol_ip_isolated(velo_pol_ip_of(addr), isolate);
}

/* A pod velod has placed: its address has a pod identity. */
static __always_inline bool velo_pol_placed(const struct velo_pol_ip *ip)
{
	return ip && ip->pod_id >= VELO_ID_POD_FIRST;
}

/*
 * What the fast paths ask before they carry a flow past the programs that
 * judge it (XDP runs before the sender's tc ingress; a redirect skips the
 * receiver's tc egress): true when both ends are placed and neither is
 * isolated, or the flow has a current entry (an isolated pod's reply to a
 * flow carried past its programs would find none, and be judged as a flow of
 * its own). Otherwise the packet takes the stack, where those programs judge
 * it (and allow the next ones a shortcut).
 */
static __always_inline bool velo_pol_shortcut_ok(const struct velo_pol_flow *flow, bool src_local)
{
	const __u32 either = VELO_POL_JUDGED_INGRESS | VELO_POL_JUDGED_EGRESS;
	const struct velo_pol_state *state = velo_pol_state();
	const struct velo_pol_ip *src, *dst;

	if (!state || !state->active)
		return true;
	/*
	 * A pod of this node velod hasn't placed yet (its programs fail closed):
	 * the destination always is one, the source when its own veth's programs
	 * haven't run yet (src_local: XDP on its veth).
	 */
	src = velo_pol_ip_of(flow->key.saddr);
	dst = velo_pol_ip_of(flow->key.daddr);
	if (!velo_pol_placed(dst) || (src_local && !velo_pol_placed(src)))
		return false;
	/* Either end isolated either way: its replies, too, need the flow's entry. */
	if (!velo_pol_ip_isolated(src, either) && !velo_pol_ip_isolated(dst, either))
		return true;
	return velo_pol_ct_current(flow, state->revision);
}

/* The flow of a packet the fast paths parsed (lib/parse.h's TCP/UDP). */
static __always_inline void velo_pol_flow_of(const struct velo_pkt *pkt, struct velo_pol_flow *flow)
{
	__builtin_memcpy(flow->key.saddr, pkt->src.addr, 16);
	__builtin_memcpy(flow->key.daddr, pkt->dst.addr, 16);
	flow->key.sport = pkt->sport;
	flow->key.dport = pkt->dport;
	flow->key.proto = pkt->l4proto;
}

#endif
