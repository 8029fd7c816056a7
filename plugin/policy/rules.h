/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velo_pol_sub_v1's and velo_pol_rule_v1's entries (rules.c) for the
 * identities of this node's pods that some policy selects.
 */
#ifndef VELO_POLICY_RULES_H
#define VELO_POLICY_RULES_H

#include <stdbool.h>

#include "policy/build.h"

/* The policy selects the pod identity's pods (its namespace, its podSelector). */
bool velo_pol_netpol_selects(const struct velo_pol_netpol *netpol, const struct velo_pol_pod *pod);
/* Into tables->subjects and ->rules (sorted, one entry per key), tables->active: 0 or -ENOMEM. */
int velo_pol_rules_build(const struct velo_pol_build *build, struct velo_pol_tables *tables);

#endif
