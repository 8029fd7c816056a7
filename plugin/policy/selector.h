/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Label selectors and NetworkPolicy peers matched against pods (selector.c),
 * as Kubernetes defines them: matchLabels and every matchExpression must
 * hold (NotIn and DoesNotExist hold for a missing label); an empty selector
 * matches everything.
 */
#ifndef VELO_POLICY_SELECTOR_H
#define VELO_POLICY_SELECTOR_H

#include <stdbool.h>

#include "policy/objects.h"

bool velo_pol_selector_match(const struct velo_pol_selector *selector,
			     const struct velo_pol_labels *labels);
/*
 * A podSelector/namespaceSelector peer of a policy in policy_ns selects a pod
 * of pod_ns with pod_labels, its namespace labelled ns_labels: podSelector
 * alone means pods of the policy's namespace, namespaceSelector alone every
 * pod of the namespaces it matches, both the pods matching one in the
 * namespaces matching the other. An ipBlock peer selects no pod by labels.
 */
bool velo_pol_peer_selects(const struct velo_pol_peer *peer, const char *policy_ns,
			   const char *pod_ns, const struct velo_pol_labels *pod_labels,
			   const struct velo_pol_labels *ns_labels);

#endif
