/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What Kubernetes NetworkPolicy semantics make of the cluster's objects for
 * this node, as compute.c builds it (table.c: orders and lookups): the exact
 * contents of velo_pol_ip_v1,
 * velo_pol_sub_v1 and velo_pol_rule_v1 (bpf/lib/velo_policy.h). Pure.
 *  - a pod's identity is its namespace, labels and named ports; every pod
 *    address maps to it, and to the longest ipBlock prefix holding it;
 *  - every ipBlock cidr and except is a prefix with an identity of its own;
 *    ::/0 and ::ffff:0:0/96 map what nothing else holds to 0.0.0.0/0's or
 *    ::/0's identity when a policy names it, else to VELO_ID_WORLD;
 *  - this node's addresses are VELO_ID_HOST, Service CIDRs carry
 *    VELO_POL_IP_SERVICE, this node's pods (endpoint records) _LOCAL;
 *  - subjects and rules only for the identities of this node's pods: a
 *    direction is isolated when some policy selecting the pod has it in its
 *    policyTypes; its rules allow what any of those policies' rules allow
 *    (policies are additive), peers expanded to the identities they match;
 *  - ClusterNetworkPolicy rules of the pods they select, in tier order
 *    (velo_pol_tier_v1, bpf/lib/velo_policy.h).
 */
#ifndef VELO_POLICY_TABLE_H
#define VELO_POLICY_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/lib/velo_policy.h"
#include "policy/ids.h"
#include "policy/objects.h"

/* A pod of this node as its endpoint record has it. */
struct velo_pol_local_pod {
	char ns[VELO_POL_NS_MAX];
	char name[VELO_POL_NAME_MAX];
	unsigned n_ips;
	struct velo_pol_cidr ips[VELO_POL_MAX_POD_IPS];
};

/* This node, as the computation needs it. */
struct velo_pol_node {
	const char *name; /* a record's pod is this node's when its nodeName is this or "" */
	unsigned n_service_cidrs, n_addrs, n_local;
	const struct velo_pol_cidr *service_cidrs;
	const struct velo_pol_cidr *addrs; /* full length */
	const struct velo_pol_local_pod *local;
};

/* Numbers kept from one computation to the next (ids.h); zeroed at first. */
struct velo_pol_numbering {
	bool ready;
	struct velo_pol_ids pods, cidrs, policies;
};

struct velo_pol_ip_entry {
	struct velo_pol_ip_key key;
	struct velo_pol_ip value;
};

struct velo_pol_subject_entry {
	__u32 id;
	struct velo_pol_subject value;
};

struct velo_pol_rule_entry {
	struct velo_pol_rule_key key;
	struct velo_pol_rule value;
};

struct velo_pol_tier_entry {
	struct velo_pol_rule_key key; /* dir: VELO_POL_TIER_* | VELO_POL_DIR_* */
	struct velo_pol_tier_rule value;
};

/* An identity, for veloctl and the logs: the key it was numbered by (ids.h). */
struct velo_pol_identity {
	__u32 id;
	const char *key; /* the numbering's; valid while it is unchanged */
};

/* What this node's pods are: their identity, whether they are subjects. */
struct velo_pol_placed {
	char ns[VELO_POL_NS_MAX];
	char name[VELO_POL_NAME_MAX];
	__u32 id; /* VELO_ID_NONE: not placed (unplaced says why) */
	__u32 isolate; /* its subject's flags: VELO_POL_ISOLATE_*, _ADMIN_*, _BASELINE_* */
	const char *unplaced; /* why the pod has no identity (a constant string), else NULL */
};

struct velo_pol_tables {
	unsigned n_ips, n_subjects, n_rules, n_tier_rules, n_identities, n_placed;
	struct velo_pol_ip_entry *ips; /* sorted by velo_pol_ip_cmp */
	struct velo_pol_subject_entry *subjects; /* sorted by id */
	struct velo_pol_rule_entry *rules; /* sorted by velo_pol_rule_cmp */
	struct velo_pol_tier_entry *tier_rules; /* likewise */
	struct velo_pol_identity *identities; /* pods' and prefixes', sorted by id */
	struct velo_pol_placed *placed; /* the node's local pods, in its order */
	bool active; /* some local pod is a subject */
};

void velo_pol_tables_free(struct velo_pol_tables *tables);
void velo_pol_numbering_free(struct velo_pol_numbering *numbering);

/* Orders of the sorted tables: rules group by subject, peer and direction. */
int velo_pol_id_cmp(const void *a, const void *b); /* what starts with its __u32 id */
int velo_pol_ip_cmp(const void *a, const void *b);
int velo_pol_rule_cmp(const void *a, const void *b);
/*
 * A rule key (velo_pol_rule_v1's and velo_pol_tier_v1's) for subject, peer
 * and dir: proto 0 every protocol, else port (host order) with its leading
 * port_bits counting.
 */
void velo_pol_rule_key_init(struct velo_pol_rule_key *key, __u32 subject, __u32 peer, __u8 dir,
			    __u8 proto, uint16_t port, unsigned port_bits);
/* The first prefixlen bits of a and b agree. */
bool velo_pol_bits_equal(const __u8 *a, const __u8 *b, unsigned prefixlen);
/* The rule key outer matches every key inner does (as the LPM trie compares them). */
bool velo_pol_rule_key_covers(const struct velo_pol_rule_key *outer,
			      const struct velo_pol_rule_key *inner);
int velo_pol_subject_cmp(const void *a, const void *b);
/* Lookups in built tables; NULL when absent. */
const struct velo_pol_subject_entry *velo_pol_tables_subject(const struct velo_pol_tables *tables,
							     __u32 id);
const struct velo_pol_identity *velo_pol_tables_identity(const struct velo_pol_tables *tables,
							 __u32 id);
const struct velo_pol_placed *velo_pol_tables_placed(const struct velo_pol_tables *tables,
						     const char *ns, const char *name);
/* The policy numbered id by the numbering ("ns/name"), or NULL. */
const char *velo_pol_policy_name(const struct velo_pol_numbering *numbering, __u32 id);

#endif
