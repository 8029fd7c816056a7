/* SPDX-License-Identifier: Apache-2.0 */
/* NetworkPolicy's part of velod's /metrics (policy_metrics.c). */
#ifndef VELOD_POLICY_POLICY_METRICS_H
#define VELOD_POLICY_POLICY_METRICS_H

#include "agent/agent.h"

/*
 * NULL with policySource "none". velo_policy_syncs_total, _sync_seconds,
 * _identities, _rules, _errors_total; velo_policy_drops_total per local pod
 * and reason from velo_pol_drop_v1 (summed over CPUs; addresses no local
 * pod has any more are left out); with the API, the watches' counters. Caller frees.
 */
char *policy_metrics(const struct policy *policy, const struct agent_config *config);

#endif
