/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uplinkXdp (docs/uplink.md): velo_xdp_uplink on the device that carries
 * traffic from other nodes, redirecting frames for local XDP pods straight
 * into their host veths. The link is pinned under <bpffs>/node_v1/, so it
 * outlives velod and a restart keeps it (with the program updated) instead
 * of attaching a second one.
 */
#ifndef VELOD_ROUTING_UPLINK_XDP_H
#define VELOD_ROUTING_UPLINK_XDP_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/agent.h"

/*
 * At start: attaches, or keeps, the program on a named device; detaches a
 * pinned one when the setting is off. With uplinkXdp true it only says that
 * the device comes with the node list. Never fatal: whatever the kernel or
 * driver can't do leaves cross-node traffic on the routed path, with one log
 * line.
 */
void uplink_xdp_apply(const struct agent_config *config);

/*
 * uplinkXdp true, from each host-gw pass (whatever the node list's source):
 * ifindex is the device holding one of this node's addresses in the list,
 * 0 when none does or the node is not in it. Attaches there, or moves the
 * link there from another device; a device it failed on is not tried again.
 */
void uplink_xdp_follow(const struct agent_config *config, int ifindex);

/* The pinned link's path (dir: its folder) into buf; -ENAMETOOLONG when it doesn't fit. */
int uplink_xdp_pin_path(const struct velo_paths *paths, bool dir, char *buf, size_t len);
/* The device of the link pinned at pin, 0 when there is none (or its device is gone). */
int uplink_xdp_pinned_ifindex(const char *pin);

#endif
