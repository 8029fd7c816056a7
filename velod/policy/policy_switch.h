/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NetworkPolicy's one switch (policy_switch.c): velod's policySource turns
 * policy on or off for velod and the plugin together. velod writes it to
 * <stateDir>/.policy-switch (state/policy_switch.h), which ADD reads. On:
 * policy.c attaches the programs to every pod some policy selects, from the
 * endpoint records, whatever ADD did. Off: the sweep takes every policy
 * program off every pod and uplink, and again whenever the records change
 * (an ADD that read "on" just before).
 */
#ifndef VELOD_POLICY_POLICY_SWITCH_H
#define VELOD_POLICY_POLICY_SWITCH_H

#include <stdint.h>

#include "agent/agent.h"

/*
 * Says "on". Coming from off (or nothing), velod's namespace list goes
 * first: until the first sync writes it again, ADD attaches to every pod
 * (fail closed). 0 or -errno.
 */
int policy_switch_on(const struct agent_config *config);

/*
 * Says "off", removes the namespace list, takes every program off: 0, or
 * -errno when the switch could not be written (the sweep runs anyway) or
 * -ENOMEM (it can't).
 */
int policy_sweep_start(struct policy *policy, const struct agent_config *config);
/* Sweeps again when the records changed or the last sweep left some pod busy. */
void policy_sweep_step(struct policy *policy, const struct agent_config *config, uint64_t now_ns);
uint64_t policy_sweep_deadline(const struct policy *policy);
void policy_sweep_stop(struct policy *policy);

#endif
