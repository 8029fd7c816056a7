/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Namespaces, Pods and NetworkPolicies from the Kubernetes API
 * (k8s_policy.c): three watches (k8s_watch.h) of /api/v1/namespaces,
 * /api/v1/pods and /apis/networking.k8s.io/v1/networkpolicies keeping one
 * set of objects (policy/objects.h). velod's loop polls for changes and
 * computes from the set once all three have listed: a policy is never
 * computed against pods or namespaces velod hasn't seen yet.
 */
#ifndef VELOD_K8S_K8S_POLICY_H
#define VELOD_K8S_K8S_POLICY_H

#include <stdbool.h>

#include "policy/objects.h"
#include "agent/agent.h"
#include "k8s_list_watch.h"

#define K8S_POLICY_WATCHES 3 /* Namespaces, Pods, NetworkPolicies */

struct k8s_policy;

/* Starts the watches for config's API source. NULL with errno (ENOENT: no libcurl). */
struct k8s_policy *k8s_policy_start(const struct agent_config *config);
/* Watch i's fd (i < K8S_POLICY_WATCHES): readable when it has news; poll drains it. */
int k8s_policy_fd(const struct k8s_policy *policy, unsigned i);
/* Drains the watches (their log lines written). True when all have listed and the set
 * changed since the last poll. */
bool k8s_policy_poll(struct k8s_policy *policy);
/* All listed: fn(objects, ctx) under the set's lock, its answer returned; -EAGAIN before. */
int k8s_policy_with(struct k8s_policy *policy,
		    int (*fn)(const struct velo_pol_objects *objects, void *ctx), void *ctx);
/* Watch i's counters and its resource's name ("namespaces", "pods", "networkpolicies"). */
const char *k8s_policy_stats(struct k8s_policy *policy, unsigned i, struct k8s_watch_stats *stats);
/* Ends the watches and frees everything. */
void k8s_policy_stop(struct k8s_policy *policy);

#endif
