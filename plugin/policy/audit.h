/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Audit mode (audit.c). rules.c and tiers.c leave audited policies out of
 * what the programs enforce and note the pods they judge (build->audited);
 * this adds, for those pods only, the verdict every policy would give: their
 * subject flags shifted by VELO_POL_SHADOW_SHIFT with VELO_POL_AUDIT, their
 * rules and tier rules keyed with VELO_POL_SHADOW (bpf/lib/velo_policy.h).
 * The programs pass what the enforced set allows and report what the
 * every-policy set would have dropped.
 */
#ifndef VELO_POLICY_AUDIT_H
#define VELO_POLICY_AUDIT_H

#include "policy/build.h"

/* The audited pods' every-policy entries merged into tables: 0 or -ENOMEM. */
int velo_pol_audit_build(struct velo_pol_build *build, struct velo_pol_tables *tables);

#endif
