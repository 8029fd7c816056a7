/* SPDX-License-Identifier: Apache-2.0 */
/* vxlan (vxlan.c): the routing backend that tunnels other nodes' pod CIDRs over VXLAN. */
#ifndef VELOD_ROUTING_VXLAN_H
#define VELOD_ROUTING_VXLAN_H

#include <stdbool.h>

#include "routing_backend.h"

/* routingMode "vxlan" (routing.c's table). */
extern const struct routing_backend vxlan_backend;

/*
 * vxlan's pass over the nodes n of list with mine[n] (mine NULL: every node):
 * the devices, then per node its FDB entry, its gateways' neighbour entries and
 * its CIDRs' routes, then removal of every entry and route on the devices none
 * of them wants. Adds what it routed to stats->routes. auto.c runs it over the
 * nodes host-gw can't reach.
 */
int vxlan_sync_nodes(struct nl_sock *sk, struct hostgw_stats *stats,
		     const struct agent_config *config, const struct node_list *list,
		     const bool *mine);
/* Deletes the devices and with them all vxlan put in the kernel (a routingMode without it). */
void vxlan_clear(struct nl_sock *sk);

#endif
