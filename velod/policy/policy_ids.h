/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The identity numbering kept across velod's restarts (policy_ids.c), in
 * <runDir>/policy/identities: on tmpfs like the maps' bpffs, so both last
 * until the node reboots and agree. A restarted velod numbers every pod,
 * prefix and policy as before, and its first write changes nothing that
 * didn't change (policy/numbering.h).
 */
#ifndef VELOD_POLICY_POLICY_IDS_H
#define VELOD_POLICY_POLICY_IDS_H

#include "policy/table.h"
#include "agent/agent.h"

/* The saved numbering into numbering (left unready without a good file). */
void policy_ids_load(const struct agent_config *config, struct velo_pol_numbering *numbering);
/*
 * numbering written whole and renamed into place when it differs from
 * *saved (the last text written, kept by the caller; freed with free()).
 */
void policy_ids_save(const struct agent_config *config, const struct velo_pol_numbering *numbering,
		     char **saved);

#endif
