/* SPDX-License-Identifier: Apache-2.0 */
/* Every fast path and pod feature, in attach order (detached in reverse): what the verbs walk. */
#ifndef VELO_FEATURES_TABLE_H
#define VELO_FEATURES_TABLE_H

#include "features/feature.h"

extern const struct velo_feature *const velo_features[];
extern const unsigned velo_features_len;

#endif
