// SPDX-License-Identifier: Apache-2.0
/*
 * The table of velod's parts, in start order (stopped in reverse). The reaper
 * first: its agent lock says no other velod runs. Reconciliation next, so its
 * /healthz verdict comes first. Then the HTTP server, so /healthz answers while
 * the sources start; routing; the sources the datapath's maps need
 * (Nodes, Services, NetworkPolicy); flow events, which name pods and Services
 * from those; the sampler last.
 */
#include "agent/http_server.h"
#include "flows/flows_part.h"
#include "node/node_parts.h"
#include "parts.h"
#include "policy/policy_part.h"
#include "routing/routing_parts.h"
#include "services/services_part.h"

const struct agent_part *const agent_parts[] = {
	&reaper_part,	 &reconcile_part, &http_part,	&routing_part, &uplink_xdp_part,
	&uplink_tc_part, &services_part,  &policy_part, &flows_part,   &sampler_part,
};
const unsigned agent_parts_len = sizeof(agent_parts) / sizeof(agent_parts[0]);
