/* SPDX-License-Identifier: Apache-2.0 */
/* host-gw (hostgw.c): routes to other nodes' pod CIDRs via their addresses. */
#ifndef VELOD_ROUTING_HOSTGW_H
#define VELOD_ROUTING_HOSTGW_H

#include <stdint.h>

#include "agent/agent.h"

/*
 * One pass when due (every routeSyncSeconds, and at once when the Node watch
 * changed the list): reads the node list (nodes_file or the watch's),
 * installs and removes host-gw routes.
 */
void hostgw_step(struct hostgw_stats *stats, const struct agent_config *config, uint64_t now_ns);
uint64_t hostgw_deadline(const struct hostgw_stats *stats, const struct agent_config *config);

#endif
