/* SPDX-License-Identifier: Apache-2.0 */
/* The services part of velod's /metrics (services_metrics.c). */
#ifndef VELOD_SERVICES_SERVICES_METRICS_H
#define VELOD_SERVICES_SERVICES_METRICS_H

#include "agent/agent.h"

/*
 * NULL when servicesFile is unset. Per service port, translations and
 * refusals; labels service ("<ns>/<name>"), port ("<name or number>/<proto>")
 * and cluster_ip, bounded by the Services there are. Caller frees.
 */
char *services_metrics(const struct services *services, const struct agent_config *config);

#endif
