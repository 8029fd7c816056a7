/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Deleting a veth costs ~20 ms of RCU grace periods under RTNL, most of a
 * DEL. When velod runs, DEL only retires the host veth instead: down (its
 * routes and neighbour entries go at once, and the pod side loses carrier)
 * and into velo's retired link group, in one request. velod deletes the
 * whole group at once every reapIntervalMs, so a burst of DELs shares one
 * grace period. Without velod, DEL retires the same way and forks a child that
 * deletes the group while the DEL goes on; velo waits for it before exiting.
 */
#ifndef VELO_NET_RETIRE_H
#define VELO_NET_RETIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/types.h"

/* The link group of retired host veths: "velo" in ASCII. */
#define VELO_RETIRED_GROUP 0x76656c6fu
/* <run_dir>/velod.lock: velod holds it (flock) for as long as it runs. */
#define VELO_AGENT_LOCK_NAME "velod.lock"

/* velod: takes the agent lock for its lifetime; -EWOULDBLOCK when another velod has it. */
int velo_agent_lock(const struct velo_paths *paths);
/* Whether a velod holds the agent lock of these paths (so retired veths get deleted). */
bool velo_agent_running(const struct velo_paths *paths);
/* Retires host_ifname in the current netns: 1 when it did, 0 when there is none, or -errno. */
int velo_veth_retire(const char *host_ifname);
/* Deletes every retired veth of the current netns: 1 if any went, 0 if none, or -errno. */
int velo_retired_reap(void);
/* The longest a reaper child runs: then SIGALRM ends it. */
#define VELO_REAPER_TIMEOUT_S 10
/* The same in a forked child (stdio on /dev/null, no other fd kept): its pid, or 0 when the fork
 * failed and the delete was done in place. */
int velo_retired_reap_start(void);
/* Waits for the child velo_retired_reap_start returned (pid <= 0: none). */
void velo_retired_reap_wait(int pid);
/* ADD found an interface in its way: if ifindex (in the current netns) is a retired veth, delete
 * it now and return true; true too when no ifindex exists (a reaper was faster): look again. */
bool velo_retired_clear(int ifindex);

#endif
