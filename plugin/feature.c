// SPDX-License-Identifier: Apache-2.0
/* The table of fast paths and pod features, in attach order. */
#include <stddef.h>

#include "feature.h"

const struct velo_feature *const velo_features[] = {
	NULL, /* placeholder so the table is never empty; skipped */
};
const unsigned velo_features_len = 0;
