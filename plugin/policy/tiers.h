/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ClusterNetworkPolicy's tiers for this node's pods (tiers.c): the entries of
 * velo_pol_tier_v1 and the subjects' VELO_POL_ADMIN_* / _BASELINE_* flags.
 * A policy's rules rank by (tier, priority, name, place in its list); a
 * key's entry carries the best-ranked rule of all that cover it, so the
 * programs' longest match per peer identity is that peer's first rule.
 */
#ifndef VELO_POLICY_TIERS_H
#define VELO_POLICY_TIERS_H

#include <stdbool.h>

#include "policy/build.h"

/* The policy's subject selects pod, whose namespace has ns_labels. */
bool velo_pol_cnp_selects_pod(const struct velo_pol_cnp *cnp, const struct velo_pol_pod *pod,
			      const struct velo_pol_labels *ns_labels);
/* The policies' evaluation order (Admin then Baseline, priority, name) as indexes into *order (malloc'd): 0 or -ENOMEM. */
int velo_pol_cnp_order(const struct velo_pol_objects *objects, unsigned **order);
/*
 * Into tables->tier_rules (sorted, one entry per key), the flags merged into
 * tables->subjects (after rules.c's), tables->placed and ->active: 0 or -ENOMEM.
 */
int velo_pol_tiers_build(const struct velo_pol_build *build, struct velo_pol_tables *tables);

#endif
