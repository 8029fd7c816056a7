/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NetworkPolicy in velod (policy.c): Namespaces, Pods and NetworkPolicies
 * from policyFile or the API's watches (policySource), this node's pods from
 * the endpoint records, the maps computed (policy/table.h) and written
 * (datapath/policy_maps.h) whenever either changes, at most every
 * policySyncMs; then <runDir>/policy/namespaces for ADD, and the programs
 * attached to the pods some policy selects and detached from the others.
 */
#ifndef VELOD_POLICY_POLICY_H
#define VELOD_POLICY_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"

struct policy_state;
struct velo_pol_objects;

/* Starts the source (the API's watches with policySource "api"): 0 or -errno. */
int policy_start(struct policy *policy, const struct agent_config *config);
/* The watches' fds (i < K8S_POLICY_WATCHES) for velod's poll, -1 without them. */
int policy_fd(const struct policy *policy, unsigned i);
/* velod's loop's turn (the part's step): the watches drained, the maps synced when due. */
void policy_step(struct agent *agent, uint64_t now_ns);
uint64_t policy_deadline(const struct policy *policy);
/*
 * The objects of the source (the file's, or the watches' held until
 * policy_objects_release); NULL before the watches have all listed.
 */
const struct velo_pol_objects *policy_objects_hold(const struct policy_state *state);
void policy_objects_release(const struct policy_state *state);
void policy_stop(struct policy *policy);

#endif
