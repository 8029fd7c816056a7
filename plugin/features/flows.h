/* SPDX-License-Identifier: Apache-2.0 */
/* Connection start and end events of a pod (velo.dev/flows, docs/flows.md). */
#ifndef VELO_FEATURES_FLOWS_H
#define VELO_FEATURES_FLOWS_H

#include "features/feature.h"

extern const struct velo_feature velo_feature_flows;

#endif
