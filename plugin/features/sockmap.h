/* SPDX-License-Identifier: Apache-2.0 */
/* The socket short-circuit between local pods (velo.dev/sockmap). */
#ifndef VELO_FEATURES_SOCKMAP_H
#define VELO_FEATURES_SOCKMAP_H

#include "features/feature.h"

extern const struct velo_feature velo_feature_sockmap;

#endif
