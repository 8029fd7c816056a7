/* SPDX-License-Identifier: Apache-2.0 */
/*
 * status's routing part (status_routing.c): velod's routingMode and how it
 * reaches each other node (host-gw or vxlan), read from its /metrics
 * (velo_routing_mode, velo_routing_node_path).
 */
#ifndef VELOCTL_STATUS_ROUTING_H
#define VELOCTL_STATUS_ROUTING_H

#include <cJSON.h>

/* {"mode": "auto", "nodes": [{"node": "n2", "path": "vxlan"}, ...]}; NULL when velod at agent
 * doesn't answer /metrics or routes nothing (no node list). */
cJSON *status_routing_json(const char *agent);
/* The text lines of it: the mode, counts per path and the first nodes. */
void status_routing_print(const cJSON *routing);

#endif
