/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Services and EndpointSlices from the Kubernetes API (k8s_services.c): two
 * watches (k8s_watch.h) of /api/v1/services and
 * /apis/discovery.k8s.io/v1/endpointslices keeping one svc_state. velod's loop
 * polls for changes and builds the service table from it once both have
 * listed, so a Service is never written before its slices could be known.
 */
#ifndef VELOD_K8S_K8S_SERVICES_H
#define VELOD_K8S_K8S_SERVICES_H

#include <stdbool.h>

#include "datapath/svc_table.h"
#include "agent/agent.h"
#include "k8s_list_watch.h"

#define K8S_SERVICES_WATCHES 2 /* Services, EndpointSlices */

struct k8s_services;

/* Starts both watches for config's API source. NULL with errno (ENOENT: no libcurl). */
struct k8s_services *k8s_services_start(const struct agent_config *config);
/* Watch i's fd (i < K8S_SERVICES_WATCHES): readable when it has news; poll drains it. */
int k8s_services_fd(const struct k8s_services *services, unsigned i);
/* Drains both watches (their log lines written). True when both have listed and the state
 * changed since the last build. */
bool k8s_services_poll(struct k8s_services *services);
/* Both listed: the current state made into table for node (svc_table.h). -EAGAIN before. */
int k8s_services_build(struct k8s_services *services, const char *node,
		       struct velo_svc_table *table);
/* Watch i's counters and its resource's name ("services", "endpointslices"). */
const char *k8s_services_stats(struct k8s_services *services, unsigned i,
			       struct k8s_watch_stats *stats);
/* Ends both watches and frees everything. */
void k8s_services_stop(struct k8s_services *services);

#endif
