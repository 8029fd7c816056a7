// SPDX-License-Identifier: Apache-2.0
/* The table of fast paths and pod features, in attach order. */
#include "feature.h"

extern const struct velo_feature velo_feature_fastpath;

const struct velo_feature *const velo_features[] = {
	&velo_feature_fastpath,
};
const unsigned velo_features_len = sizeof(velo_features) / sizeof(velo_features[0]);
