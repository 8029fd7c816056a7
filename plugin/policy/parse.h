/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Namespace and Pod objects (parse.c) as NetworkPolicy needs them, and
 * velod's policyFile: {"namespaces": [...], "pods": [...],
 * "networkPolicies": [...], "clusterNetworkPolicies": [...], "nodes": [...]}, objects shaped as the API serves them. Pure.
 */
#ifndef VELO_POLICY_PARSE_H
#define VELO_POLICY_PARSE_H

#include <stddef.h>

#include <cJSON.h>

#include "policy/objects.h"

/*
 * A Namespace: its name and labels, with kubernetes.io/metadata.name added
 * when absent (the API server sets it; a file may not). -EINVAL with why, -ENOMEM.
 */
int velo_pol_namespace_parse(const cJSON *json, struct velo_pol_namespace *out, char *why,
			     size_t why_size);
/*
 * A Pod: namespace, name, spec.nodeName, labels, status.podIPs (else podIP),
 * the named ports of its containers (and init containers: sidecars; a name
 * may repeat across containers, as the API allows with a warning: each
 * number is kept), whether it is hostNetwork or finished (Succeeded, Failed).
 * -EINVAL only without a usable namespace and name: any other field velod
 * can't read is left out and named in out->problem (and why), the pod kept.
 * -ENOMEM.
 */
int velo_pol_pod_parse(const cJSON *json, struct velo_pol_pod *out, char *why, size_t why_size);

/*
 * A Node: its name, labels and status.addresses' InternalIP and ExternalIP
 * (what a ClusterNetworkPolicy nodes peer selects). -EINVAL with why, -ENOMEM.
 */
int velo_pol_node_parse(const cJSON *json, struct velo_pol_node_obj *out, char *why,
			size_t why_size);

/*
 * The policy file. Unlike a watch, all or nothing: the first bad object
 * fails it with -EINVAL and why; state is then empty.
 */
int velo_pol_objects_parse(const char *text, size_t len, struct velo_pol_objects *state, char *why,
			   size_t why_size);

#endif
