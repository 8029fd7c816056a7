/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How the last pass reaches each other node (routing_paths.c): host-gw or the
 * VXLAN tunnel, per node, for /metrics (velo_routing_node_path) and the flows'
 * path. The seam resets it before each pass; the backends mark the nodes they
 * route.
 */
#ifndef VELOD_ROUTING_ROUTING_PATHS_H
#define VELOD_ROUTING_ROUTING_PATHS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/agent.h"

enum routing_path {
	ROUTING_PATH_NONE, /* this node, or not routed (the pass failed, no usable address) */
	ROUTING_PATH_HOST_GW,
	ROUTING_PATH_VXLAN,
};

/* Forgets the last pass's marks; list is the one the coming pass works on. */
void routing_paths_reset(const struct node_list *list);
/* node (an entry of list) is reached by path. */
void routing_paths_set(const struct node_list *list, const struct node *node,
		       enum routing_path path);
/* The path a node of the last pass took (NONE when none); for tests and status. */
enum routing_path routing_paths_get(const struct node *node);
/* Some node of the last pass is reached through the tunnel (false under host-gw). */
bool routing_paths_tunnels(void);
/* The path to the other node whose pod CIDRs hold addr (16 bytes, IPv4 mapped); NONE when none. */
enum routing_path routing_paths_of_addr(const uint8_t addr[16]);
/* velo_routing_node_path{node, path} 1 for every node the last pass routed. */
struct metrics_text;
void routing_paths_metrics(struct metrics_text *text);

#endif
