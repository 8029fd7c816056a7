/* SPDX-License-Identifier: Apache-2.0 */
/* One computation of this node's policy tables (compute.c; what they hold: table.h). */
#ifndef VELO_POLICY_COMPUTE_H
#define VELO_POLICY_COMPUTE_H

#include "policy/objects.h"
#include "policy/table.h"

/* 0, -ENOMEM, -ENOSPC (more identities than their space). Free tables after. */
int velo_pol_tables_build(const struct velo_pol_objects *objects, const struct velo_pol_node *node,
			  struct velo_pol_numbering *numbering, struct velo_pol_tables *tables);

#endif
