/* SPDX-License-Identifier: Apache-2.0 */
/* The uplink XDP program's metrics (uplink_xdp_metrics.c, docs/uplink.md). */
#ifndef VELOD_ROUTING_UPLINK_XDP_METRICS_H
#define VELOD_ROUTING_UPLINK_XDP_METRICS_H

#include "agent/agent.h"

/* The uplink's /metrics text (malloc'd; NULL when the program was never loaded here). */
char *uplink_xdp_metrics(const struct agent_config *config);

#endif
