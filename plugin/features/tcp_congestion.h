/* SPDX-License-Identifier: Apache-2.0 */
/* The pod's TCP congestion control (velo.dev/tcp-congestion). */
#ifndef VELO_FEATURES_TCP_CONGESTION_H
#define VELO_FEATURES_TCP_CONGESTION_H

#include "features/feature.h"

extern const struct velo_feature velo_feature_tcp_congestion;

#endif
