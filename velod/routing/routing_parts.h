/* SPDX-License-Identifier: Apache-2.0 */
/* The routing parts of velod (routing_parts.c): pods' traffic on and off the node. */
#ifndef VELOD_ROUTING_ROUTING_PARTS_H
#define VELOD_ROUTING_ROUTING_PARTS_H

#include "agent/part.h"

/* Strict source check on pods' host veths; without nf_tables velod runs on. */
extern const struct agent_part guard_part;
/* Accept rules in iptables' FORWARD chains, put back every reconcileInterval. */
extern const struct agent_part forward_part;
/* velo_xdp_uplink on the node's uplink device. */
extern const struct agent_part uplink_xdp_part;
/* Routes to other nodes' pod CIDRs; fatal when the Node watch can't start. */
extern const struct agent_part hostgw_part;

#endif
