/* SPDX-License-Identifier: Apache-2.0 */
/* The L3 shortcut between local pods (velo.dev/fastpath: tc or xdp). */
#ifndef VELO_FEATURES_FASTPATH_H
#define VELO_FEATURES_FASTPATH_H

#include "features/feature.h"

extern const struct velo_feature velo_feature_fastpath;

#endif
