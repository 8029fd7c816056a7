/* SPDX-License-Identifier: Apache-2.0 */
/* What velod serves (metrics.c): the /metrics text and the /healthz verdict. */
#ifndef VELOD_AGENT_METRICS_H
#define VELOD_AGENT_METRICS_H

#include <stddef.h>

#include "agent.h"

/* The Prometheus text exposition; NULL with errno on failure. Caller frees. */
char *metrics_render(const struct agent *agent, size_t *len);
/* /healthz: 0 when healthy, else -errno with a reason in buf. */
int agent_health(const struct agent *agent, char *buf, size_t len);

#endif
