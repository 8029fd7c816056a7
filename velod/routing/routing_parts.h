/* SPDX-License-Identifier: Apache-2.0 */
/* The routing parts of velod (routing_parts.c): pods' traffic on and off the node. */
#ifndef VELOD_ROUTING_ROUTING_PARTS_H
#define VELOD_ROUTING_ROUTING_PARTS_H

#include "agent/part.h"

/*
 * Routes to other nodes' pod CIDRs by routingMode's backend, with the source
 * guard, the FORWARD accept rules (put back every reconcileInterval) and the
 * uplink's XDP program; fatal when the backend or the Node watch can't start.
 */
extern const struct agent_part routing_part;
/* velo_xdp_uplink's counters (routing_part attaches the program). */
extern const struct agent_part uplink_xdp_part;
extern const struct agent_part uplink_tc_part;

#endif
