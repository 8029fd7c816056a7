/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The routing seam (routing.c): how pod traffic crosses between nodes, as one
 * part of velod. It picks the backend routingMode names (routing_backend.h)
 * and keeps, for every backend, the decisions that depend on it in one place:
 * the node list's source, this node's uplink and its forwarding, the uplink
 * XDP program, masquerade, the FORWARD accept rules and source guard on host
 * veths, and the room pods' MTU leaves for the backend's encapsulation.
 */
#ifndef VELOD_ROUTING_ROUTING_H
#define VELOD_ROUTING_ROUTING_H

#include <stdint.h>

#include "agent/agent.h"
#include "routing_backend.h"

/* The backend named name in velod's table, NULL (errno ENOENT) when none is. */
const struct routing_backend *routing_backend_find(const char *name);
/* Whether config asks only what backend can give (uplinkXdp needs a plain uplink); -EINVAL,
 * logged as a fault of the config file at path, when not. */
int routing_check(const struct routing_backend *backend, const struct agent_config *config,
		  const char *path);
/*
 * Sets state->backend to config->routing_mode's backend. -EINVAL, logged as a
 * fault of the config file at path, when velod has no such backend or the
 * config asks for what the backend can't give (routing_check).
 */
int routing_select(struct hostgw_stats *state, const struct agent_config *config, const char *path);

/*
 * At start, after routing_select: the backend's MTU overhead for ADD, source
 * guard, FORWARD accept rules, uplink XDP by device name, the backend's start
 * and the Node watch (with the API).
 * 0, or -errno when velod can't run (logged).
 */
int routing_start(struct hostgw_stats *state, const struct agent_config *config);
/*
 * One pass when due (every routeSyncSeconds, and at once when the Node watch
 * changed the list): reads the node list (nodesFile or the watch's), applies
 * the node-wide rules and has the backend sync its routes.
 */
void routing_step(struct hostgw_stats *state, const struct agent_config *config, uint64_t now_ns);
uint64_t routing_deadline(const struct hostgw_stats *state, const struct agent_config *config);
/* Readable when the Node watch changed the list; -1 without the watch. */
int routing_fd(const struct hostgw_stats *state);
/* From each reconciliation pass: puts back FORWARD accept rules a firewall reload removed. */
void routing_repair(const struct agent_config *config);
/* Ends the watch and the backend; what they put in the kernel stays for pods' sake. */
void routing_stop(struct hostgw_stats *state, const struct agent_config *config);

#endif
