/* SPDX-License-Identifier: Apache-2.0 */
/* The pod's egress deny list (velo.dev/egress-deny). */
#ifndef VELO_FEATURES_EGRESS_POLICY_H
#define VELO_FEATURES_EGRESS_POLICY_H

#include "features/feature.h"

extern const struct velo_feature velo_feature_egress_policy;

#endif
