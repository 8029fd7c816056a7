/* SPDX-License-Identifier: Apache-2.0 */
/* The cross-node tc shortcut's metrics (uplink_tc_metrics.c, docs/cross-node.md). */
#ifndef VELOD_ROUTING_UPLINK_TC_METRICS_H
#define VELOD_ROUTING_UPLINK_TC_METRICS_H

#include "agent/agent.h"

/* Its /metrics text (malloc'd; NULL when the setting is off or the counters were never made). */
char *uplink_tc_metrics(const struct agent_config *config);

#endif
