/* SPDX-License-Identifier: Apache-2.0 */
/* NetworkPolicy as a part of velod (policy_part.c). */
#ifndef VELOD_POLICY_POLICY_PART_H
#define VELOD_POLICY_POLICY_PART_H

#include "agent/part.h"

/* The velo_pol_* maps from policySource and GET /policy; fatal when the source can't start. */
extern const struct agent_part policy_part;

#endif
