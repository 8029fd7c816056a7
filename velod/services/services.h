/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Service translation's state (services.c) from servicesFile or the API's
 * Service and EndpointSlice watches (servicesSource): turned into
 * kube-proxy's ClusterIP semantics for this node (nodeName, for
 * internalTrafficPolicy Local) and written into the pinned velo_svc_* maps.
 * The file is looked at every servicesSyncMs; the API's changes are written
 * at most that often, and only once both watches have listed. A bad file
 * leaves the maps as they were and counts an error.
 */
#ifndef VELOD_SERVICES_SERVICES_H
#define VELOD_SERVICES_SERVICES_H

#include <stdint.h>

#include "agent/agent.h"

/* Starts the API's watches with servicesSource "api" (else nothing): 0 or -errno. */
int services_start(struct services *services, const struct agent_config *config);
/* The watches' fds (i < 2) for velod's select, -1 without them. */
int services_fd(const struct services *services, unsigned i);
void services_step(struct services *services, const struct agent_config *config, uint64_t now_ns);
uint64_t services_deadline(const struct services *services, const struct agent_config *config);
void services_stop(struct services *services);
/* The service port's name ("<ns>/<name>:<port>/<proto>") in the maps now; NULL when none. */
const char *services_port_name(const struct services *services, const struct velo_svc_key *key);

#endif
