/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Service translation's state from servicesFile (services.c): the file is
 * looked at every servicesSyncMs and, when it changed, parsed, turned into
 * kube-proxy's ClusterIP semantics for this node (nodeName, for
 * internalTrafficPolicy Local) and written into the pinned velo_svc_* maps.
 * A bad file leaves the maps as they were and counts an error.
 */
#ifndef VELOD_SERVICES_H
#define VELOD_SERVICES_H

#include <stdint.h>

#include "agent.h"

void services_step(struct services *services, const struct agent_config *config, uint64_t now_ns);
uint64_t services_deadline(const struct services *services, const struct agent_config *config);
void services_stop(struct services *services);

#endif
