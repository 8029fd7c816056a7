/* SPDX-License-Identifier: Apache-2.0 */
/* host-gw's part of /metrics and /healthz (hostgw_metrics.c): routes, syncs, the Node watch. */
#ifndef VELOD_ROUTING_HOSTGW_METRICS_H
#define VELOD_ROUTING_HOSTGW_METRICS_H

#include <stddef.h>

#include "agent/agent.h"

/* The Prometheus text (the caller frees); NULL when host-gw is off or on failure. */
char *hostgw_metrics(const struct agent *agent);
/* 0 once routes were synced from the node list (or host-gw is off), else -EAGAIN and why. */
int hostgw_health(const struct agent *agent, char *buf, size_t len);

#endif
