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
	/* Bytes each cross-node packet gains on the wire (encapsulation) over an IPv4 underlay:
	 * ADD takes them off pods' default MTU (state/routing_overhead.h). 0: packets cross as
	 * pods sent them. */
	unsigned mtu_overhead;
	/* The same over an IPv6 underlay (a node with an IPv6 address); 0: mtu_overhead. */
	unsigned mtu_overhead6;
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
	/* Removes everything this backend may have put in the kernel: at start, for every
	 * backend the selected one neither is nor builds on (a routingMode changed away). */
	void (*clear)(struct nl_sock *sk);
	/* Backends this one runs passes of (NULL-terminated; NULL: none): never cleared. */
	const struct routing_backend *const *builds_on;
	/* When velod stops; NULL: nothing. State it put in the kernel stays, so pods keep
	 * their cross-node traffic across a restart. */
	void (*stop)(const struct agent_config *config);
};

#endif
