/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uplinkXdp (docs/uplink.md): velo_xdp_uplink on the device that carries
 * traffic from other nodes, redirecting frames for local XDP pods straight
 * into their host veths. The link is pinned under <bpffs>/node_v1/, so it
 * outlives velod and a restart keeps it (with the program updated) instead
 * of attaching a second one.
 */
#ifndef VELOD_UPLINK_XDP_H
#define VELOD_UPLINK_XDP_H

#include "agent.h"

/*
 * At start: attaches, or keeps, the program when the setting is on; detaches
 * a pinned one when it is off. Never fatal: whatever the kernel or driver
 * can't do leaves cross-node traffic on the routed path, with one log line.
 */
void uplink_xdp_apply(const struct agent_config *config);

/* The uplink's /metrics text (malloc'd; NULL when the program was never loaded here). */
char *uplink_xdp_metrics(const struct agent_config *config);

#endif
