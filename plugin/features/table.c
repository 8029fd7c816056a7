// SPDX-License-Identifier: Apache-2.0
/* The table of fast paths and pod features, in attach order (detached in reverse). */
#include "features/accounting.h"
#include "features/egress_policy.h"
#include "features/fastpath.h"
#include "features/flows.h"
#include "features/policy.h"
#include "features/sockmap.h"
#include "features/svc.h"
#include "features/table.h"
#include "features/tcp_congestion.h"

const struct velo_feature *const velo_features[] = {
	&velo_feature_fastpath,	      &velo_feature_accounting, &velo_feature_egress_policy,
	&velo_feature_tcp_congestion, &velo_feature_sockmap,	&velo_feature_services,
	&velo_feature_policy,	      &velo_feature_flows,
};
const unsigned velo_features_len = sizeof(velo_features) / sizeof(velo_features[0]);
