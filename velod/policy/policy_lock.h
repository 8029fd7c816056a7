/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A pod's attachment lock (base/lock.h's first) for velod's policy passes
 * (policy_lock.c): tried, never waited for, so an ADD or DEL in flight makes
 * its pod wait for the next pass instead of stalling velod's loop.
 */
#ifndef VELOD_POLICY_POLICY_LOCK_H
#define VELOD_POLICY_POLICY_LOCK_H

#include "state/record.h"
#include "agent/agent.h"

/*
 * record's attachment lock: its fd (lock_release() it), or -errno: a record
 * without a lock path is passed over, a lock not taken (held, or failed) is
 * counted in *busy.
 */
int policy_lock_try(const struct agent_config *config, const struct velo_record *record,
		    unsigned *busy);

#endif
