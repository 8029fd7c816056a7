/* SPDX-License-Identifier: Apache-2.0 */
/* Deleting the veths DELs retired (reaper.c), under the agent lock. */
#ifndef VELOD_NODE_REAPER_H
#define VELOD_NODE_REAPER_H

#include <stdint.h>

#include "agent/agent.h"

/* Deleting the veths DELs retired (plugin/net/retire.h). */
struct reaper {
	int lock_fd; /* the agent lock: DELs retire only while it is held; -1 when not */
	uint64_t next_ns;
	uint64_t reaps; /* group deletes that removed at least one veth */
	uint64_t errors;
};

/* Takes the agent lock (-EWOULDBLOCK: another velod has this runDir) and reaps once. */
int reaper_start(struct reaper *reaper, const struct agent_config *config);
void reaper_step(struct reaper *reaper, const struct agent_config *config, uint64_t now_ns);
uint64_t reaper_deadline(const struct reaper *reaper);
/* Releases the lock first (new DELs delete themselves), then reaps what is left. */
void reaper_stop(struct reaper *reaper);

#endif
