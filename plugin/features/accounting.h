/* SPDX-License-Identifier: Apache-2.0 */
/* Per-pod packet and byte counters (velo.dev/accounting). */
#ifndef VELO_FEATURES_ACCOUNTING_H
#define VELO_FEATURES_ACCOUNTING_H

#include "features/feature.h"

extern const struct velo_feature velo_feature_accounting;

#endif
