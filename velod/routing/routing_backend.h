/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a routing backend (routingMode) provides to the seam (routing.h): how
 * this node reaches other nodes' pod CIDRs, given the node list. The seam owns
 * everything that doesn't differ between backends (the node list's source,
 * this node's entry and uplink, masquerade, FORWARD accept rules, the uplink
 * XDP program) and asks the backend only what does. Types only: each backend's
 * object is declared by its own header (hostgw.h) and listed in routing.c.
 */
#ifndef VELOD_ROUTING_ROUTING_BACKEND_H
#define VELOD_ROUTING_ROUTING_BACKEND_H

#include <stdbool.h>

#include "agent/agent.h"

struct nl_sock;

struct routing_backend {
	const char *name; /* routingMode's value */
	/* Bytes each cross-node packet gains on the wire (encapsulation): ADD takes them off
	 * pods' default MTU (state/routing_overhead.h). 0: packets cross as pods sent them. */
	unsigned mtu_overhead;
	/* Other nodes' pod packets arrive on the uplink as the pods sent them: the seam turns
	 * forwarding on there, and uplinkXdp's program can redirect them into pods. */
	bool plain_uplink;
	/* Once at start, before the first sync (devices of its own, say); NULL: nothing. 0 or
	 * -errno, logged: velod exits. */
	int (*start)(const struct agent_config *config);
	/*
	 * One pass over the node list (list->self is this node's entry, or NULL when the list
	 * lacks it): makes the node's routing match it, removing what the backend put there
	 * for nodes no longer in it. Counts what it installed in stats->routes and every
	 * failure in stats->errors. sk is the pass's netlink socket. 0, or -errno when the
	 * pass couldn't be made at all.
	 */
	int (*sync)(struct nl_sock *sk, struct hostgw_stats *stats,
		    const struct agent_config *config, const struct node_list *list);
	/* When velod stops; NULL: nothing. State it put in the kernel stays, so pods keep
	 * their cross-node traffic across a restart. */
	void (*stop)(const struct agent_config *config);
};

#endif
