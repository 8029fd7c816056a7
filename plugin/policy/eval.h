/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The datapath's verdict computed from the tables (eval.c), for velod
 * (which established socket pairs a change now forbids) and the tests. What
 * bpf/policy.bpf.c does for a connection's first packet:
 *  - the source's and destination's identities by longest prefix
 *    (velo_pol_ip_v1);
 *  - egress: a source pod of this node whose identity isolates egress needs a
 *    rule (its identity, the destination's pod identity, prefix identity or
 *    VELO_ID_ANY, egress, protocol, port by longest prefix); a destination
 *    in a Service CIDR is left to the backend's check (kube-proxy DNATs it);
 *  - ingress: likewise for a destination pod of this node isolating ingress,
 *    with the source as the peer;
 *  - ClusterNetworkPolicy: a side's Admin tier's first matching rule
 *    accepts or denies before NetworkPolicy, Pass (or no match) hands over to
 *    it; a side no NetworkPolicy isolates is judged by the Baseline tier's
 *    first matching rule (Deny drops, anything else passes);
 *  - this node's own addresses (VELO_ID_HOST: kubelet probes) are always let
 *    in, and let out unless a tier decides (its nodes and networks peers).
 * Replies of allowed connections pass (the datapath's conntrack): not here.
 */
#ifndef VELO_POLICY_EVAL_H
#define VELO_POLICY_EVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "policy/table.h"

/* The entry holding addr (longest prefix), or NULL (never with built tables: the defaults). */
const struct velo_pol_ip_entry *velo_pol_lookup_ip(const struct velo_pol_tables *tables,
						   const struct velo_pol_cidr *addr);
/*
 * A rule allows subject -> peer's entry (any of its identities) in dir on
 * proto/port (host order); its entry into *rule when rule isn't NULL.
 */
bool velo_pol_rule_allows(const struct velo_pol_tables *tables, __u32 subject, __u8 dir,
			  const struct velo_pol_ip *peer, uint8_t proto, uint16_t port,
			  const struct velo_pol_rule_entry **rule);
/* The first rule of a tier (dir: VELO_POL_TIER_* | VELO_POL_DIR_*) subject -> peer matches, or NULL. */
const struct velo_pol_tier_rule *velo_pol_tier_first(const struct velo_pol_tables *tables,
						     __u32 subject, __u8 dir,
						     const struct velo_pol_ip *peer, uint8_t proto,
						     uint16_t port);
/* What decided one side of a flow. */
enum velo_pol_decider {
	VELO_POL_BY_NONE, /* no policy of any tier judges the pod that way */
	VELO_POL_BY_NODE, /* this node's address: let in always, out unless a tier decides */
	VELO_POL_BY_ADMIN, /* an Admin tier rule: policy, rule, action */
	VELO_POL_BY_NETPOL, /* NetworkPolicy isolation: allowed by policy's rule, or no rule */
	VELO_POL_BY_BASELINE, /* a Baseline tier rule */
	VELO_POL_BY_DEFAULT, /* judged, but nothing matched: Kubernetes' default, allowed */
	VELO_POL_BY_SERVICE, /* egress to a Service IP: judged at the backend, after DNAT */
};

struct velo_pol_side_why {
	bool allowed;
	enum velo_pol_decider by;
	__u32 subject; /* the pod's identity when some policy judges it, else 0 */
	__u32 policy; /* the deciding policy's number (velo_pol_policy_name), 0: none */
	__u16 rule; /* a tier rule's place in its list */
	__u8 action; /* a tier rule's enum velo_pol_action */
};

/* A flow's verdict, side by side (the sender's egress, the receiver's ingress). */
struct velo_pol_why {
	bool via_service;
	struct velo_pol_side_why egress, ingress; /* ingress unset when egress dropped it */
};

/* velo_pol_verdict's answer, and why into *why. */
int velo_pol_why(const struct velo_pol_tables *tables, const struct velo_pol_cidr *src,
		 const struct velo_pol_cidr *dst, uint8_t proto, uint16_t dport,
		 struct velo_pol_why *why);
/*
 * 0 when policy allows src -> dst on proto/dport (host order), else why it
 * drops: VELO_POL_DROP_EGRESS or _INGRESS.
 */
int velo_pol_verdict(const struct velo_pol_tables *tables, const struct velo_pol_cidr *src,
		     const struct velo_pol_cidr *dst, uint8_t proto, uint16_t dport);
/* velo_pol_verdict(...) == 0. */
bool velo_pol_allowed(const struct velo_pol_tables *tables, const struct velo_pol_cidr *src,
		      const struct velo_pol_cidr *dst, uint8_t proto, uint16_t dport);

#endif
