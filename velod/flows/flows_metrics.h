/* SPDX-License-Identifier: Apache-2.0 */
/* The flows part of velod's /metrics (flows_metrics.c). */
#ifndef VELOD_FLOWS_FLOWS_METRICS_H
#define VELOD_FLOWS_FLOWS_METRICS_H

#include "agent/agent.h"

/*
 * velo_drops_total{pod,reason}, velo_flows_total{src,dst,verdict},
 * velo_policy_audit_total{pod,policy,reason} (each bounded by maxFlowSeries),
 * velo_flow_events_total and
 * velo_flow_events_lost_total. NULL when flows are off. Caller frees.
 */
char *flows_metrics(const struct agent *agent);

#endif
