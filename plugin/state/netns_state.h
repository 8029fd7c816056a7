/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether an endpoint's pod network namespace still exists: the path the
 * runtime gave at ADD must still name a namespace with the inode recorded
 * then. Shared by veloctl (display) and velod (reconciliation).
 */
#ifndef VELO_STATE_NETNS_STATE_H
#define VELO_STATE_NETNS_STATE_H

#include "state/state.h"

enum velo_netns_state {
	VELO_NETNS_ALIVE, /* the path exists and (when recorded) has the same inode */
	VELO_NETNS_GONE, /* the path is missing, or now names another namespace */
	VELO_NETNS_UNKNOWN, /* no path recorded, or it can't be checked: treat as alive */
};

enum velo_netns_state velo_netns_state(const struct velo_record *record);
const char *velo_netns_state_name(enum velo_netns_state state);

#endif
