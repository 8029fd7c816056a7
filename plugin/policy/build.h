/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One computation of the policy tables in progress (build.c), shared by
 * its steps: compute.c numbers the identities, ips.c places addresses,
 * rules.c writes subjects and rules, tiers.c the ClusterNetworkPolicy tiers,
 * audit.c the audited subjects' every-policy set.
 */
#ifndef VELO_POLICY_BUILD_H
#define VELO_POLICY_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/objects.h"
#include "policy/table.h"

/* A pod identity: the pods sharing namespace, labels and named ports. */
struct velo_pol_ident {
	const char *key;
	const struct velo_pol_pod *pod; /* one of them: its namespace, labels, ports */
	const struct velo_pol_labels *ns_labels; /* NULL: no Namespace object */
	__u32 id;
	bool local; /* some pod of this node has it */
};

/* A prefix some ipBlock names (cidr or except). */
struct velo_pol_prefix {
	struct velo_pol_cidr cidr;
	__u32 id;
};

/* A rule's peer as an identity, with its pod identity when it is one (egress named ports). */
struct velo_pol_target {
	__u32 id;
	const struct velo_pol_ident *ident;
};

/* One rule's peers (rules.c, tiers.c), reused from rule to rule. */
struct velo_pol_targets {
	struct velo_pol_target *items;
	unsigned n, cap;
};

struct velo_pol_build {
	const struct velo_pol_objects *objects;
	const struct velo_pol_node *node;
	unsigned n_idents, n_prefixes;
	struct velo_pol_ident *idents; /* sorted by key */
	unsigned *pod_ident; /* per pod of objects: its index in idents, or UINT_MAX */
	struct velo_pol_prefix *prefixes; /* longest first */
	__u32 *policy_ids; /* per NetworkPolicy of objects */
	__u32 *cnp_ids; /* per ClusterNetworkPolicy of objects (the same numbering) */
	/* Audit mode (audit.c): rules of every policy (true) or of enforced ones only. */
	bool shadow;
	bool *audited; /* per ident: some audited policy judges it */
	char *keys; /* what the idents' keys point into */
};

/* The labels of ident's namespace; one holding only its name label (in spare) when it has none. */
const struct velo_pol_labels *velo_pol_ident_ns_labels(const struct velo_pol_ident *ident,
						       struct velo_pol_labels *spare,
						       struct velo_pol_label *spare_label);
/* A policy (audit: its annotation) judging ident's pods is audited, not enforced. */
bool velo_pol_build_audits(const struct velo_pol_ident *ident, bool audit);
/* One more target: 0 or -ENOMEM. */
int velo_pol_targets_add(struct velo_pol_targets *targets, __u32 id,
			 const struct velo_pol_ident *ident);
/* Room for one more of size bytes in *array (n used, *cap allocated): 0 or -ENOMEM. */
int velo_pol_grow(void **array, unsigned n, unsigned *cap, size_t size);
/* The longest prefix holding cidr: its identity, else VELO_ID_WORLD. */
__u32 velo_pol_build_cidr_id(const struct velo_pol_build *build, const struct velo_pol_cidr *cidr);

#endif
