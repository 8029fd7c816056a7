/* SPDX-License-Identifier: Apache-2.0 */
/* velod's endpoint and per-pod metrics (metrics_endpoints.c), part of /metrics (metrics.h). */
#ifndef VELOD_AGENT_METRICS_ENDPOINTS_H
#define VELOD_AGENT_METRICS_ENDPOINTS_H

#include "agent.h"
#include "metrics_text.h"

/* velo_endpoints, velo_endpoints_netns_gone and, with podMetrics, the velo_pod_* families. */
void metrics_endpoints(const struct agent *agent, struct metrics_text *text);

#endif
