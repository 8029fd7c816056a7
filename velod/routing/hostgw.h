/* SPDX-License-Identifier: Apache-2.0 */
/* host-gw (hostgw.c): the routing backend that routes other nodes' pod CIDRs via their addresses. */
#ifndef VELOD_ROUTING_HOSTGW_H
#define VELOD_ROUTING_HOSTGW_H

#include <stdbool.h>

#include "routing_backend.h"

/* routingMode "host-gw", the default (routing.c's table). */
extern const struct routing_backend hostgw_backend;

/*
 * host-gw's pass over the nodes n of list with mine[n] (mine NULL: every
 * node): their CIDRs via their addresses, and removal of velo's host-gw routes
 * none of them wants (the tunnel's on-link routes are never touched). Adds
 * what it installed to stats->routes. auto.c runs it over the directly
 * reachable nodes.
 */
int hostgw_sync_nodes(struct nl_sock *sk, struct hostgw_stats *stats, const struct node_list *list,
		      const bool *mine);

#endif
