/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Services and EndpointSlices from the Kubernetes API (k8s_services.c): a
 * watch set (k8s_watch_set.h) of /api/v1/services and
 * /apis/discovery.k8s.io/v1/endpointslices keeping one svc_state. velod's
 * loop polls the set for changes and builds the service table from it once
 * both have listed, so a Service is never written before its slices could be
 * known. Its fds, poll, stats and stop are the set's; k8s_watch_set_hold
 * gives the svc_state.
 */
#ifndef VELOD_K8S_K8S_SERVICES_H
#define VELOD_K8S_K8S_SERVICES_H

#include "datapath/svc_table.h"
#include "agent/agent.h"
#include "k8s_watch_set.h"

#define K8S_SERVICES_WATCHES 2 /* Services, EndpointSlices */

/* Starts both watches for config's API source. NULL with errno (ENOENT: no libcurl). */
struct k8s_watch_set *k8s_services_start(const struct agent_config *config);

#endif
