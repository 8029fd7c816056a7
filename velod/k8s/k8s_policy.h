/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Namespaces, Pods, NetworkPolicies, ClusterNetworkPolicies and Nodes from the
 * Kubernetes API (k8s_policy.c): a watch set (k8s_watch_set.h) of
 * /api/v1/namespaces, /api/v1/pods, /apis/networking.k8s.io/v1/networkpolicies,
 * /apis/policy.networking.k8s.io/v1beta1/clusternetworkpolicies (none where
 * the CRD isn't installed) and /api/v1/nodes (ClusterNetworkPolicy's nodes
 * peers) keeping one set of objects (policy/objects.h). velod's loop polls the
 * set for changes and computes from the objects once all five have listed: a policy is
 * never computed against pods or namespaces velod hasn't seen yet. Its fds,
 * poll, stats and stop are the set's; k8s_watch_set_hold gives the objects.
 */
#ifndef VELOD_K8S_K8S_POLICY_H
#define VELOD_K8S_K8S_POLICY_H

#include "policy/objects.h"
#include "agent/agent.h"
#include "k8s_watch_set.h"

/* Namespaces, Pods, NetworkPolicies, ClusterNetworkPolicies, Nodes */
#define K8S_POLICY_WATCHES 5

/* Starts the watches for config's API source. NULL with errno (ENOENT: no libcurl). */
struct k8s_watch_set *k8s_policy_start(const struct agent_config *config);

#endif
