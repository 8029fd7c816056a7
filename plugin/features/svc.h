/* SPDX-License-Identifier: Apache-2.0 */
/* Connect-time ClusterIP translation on the pod's own cgroup (velo.dev/services). */
#ifndef VELO_FEATURES_SVC_H
#define VELO_FEATURES_SVC_H

#include "features/feature.h"

extern const struct velo_feature velo_feature_services;

#endif
