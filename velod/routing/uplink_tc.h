/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crossNodeTc (docs/cross-node.md): the cross-node tc shortcut's receiving
 * half, velo_tc_uplink, at tc ingress of the device holding this node's
 * address, and the map both halves read, velo_remote_v1: every other node's
 * pod CIDRs that host-gw routes, with that device. The map is written only
 * once the program runs there, and emptied before it leaves: pods' veths
 * (the sending half) never take a flow the uplink can't carry back.
 */
#ifndef VELOD_ROUTING_UPLINK_TC_H
#define VELOD_ROUTING_UPLINK_TC_H

#include "agent/agent.h"

/* At start: with the setting off, empties the map and detaches what an earlier velod left. */
void uplink_tc_apply(const struct agent_config *config);

/*
 * From each routing pass, after the backend's (routing_paths.h knows which
 * nodes it routed directly): ifindex is the device holding this node's
 * address, 0 when none does. Attaches there (or moves there, or updates an
 * earlier velod's program), then writes the map; a device it failed on is not
 * tried again until the address moves.
 */
void uplink_tc_follow(const struct agent_config *config, const struct node_list *list, int ifindex);

/* The device the program runs on, "" when none (for /metrics; a label-safe interface name). */
const char *uplink_tc_device(void);

#endif
