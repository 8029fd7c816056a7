// SPDX-License-Identifier: Apache-2.0
/* Label selectors and peers against pods (selector.h). */
#include <string.h>

#include "policy/object.h"
#include "policy/selector.h"

static bool in_values(const struct velo_pol_expr *expr, const char *value)
{
	for (unsigned i = 0; i < expr->n_values; i++)
		if (!strcmp(expr->values[i], value))
			return true;
	return false;
}

static bool expr_match(const struct velo_pol_expr *expr, const struct velo_pol_labels *labels)
{
	const char *value = velo_pol_labels_get(labels, expr->key);

	switch (expr->op) {
	case VELO_POL_OP_IN:
		return value && in_values(expr, value);
	case VELO_POL_OP_NOT_IN:
		return !value || !in_values(expr, value);
	case VELO_POL_OP_EXISTS:
		return value != NULL;
	case VELO_POL_OP_DOES_NOT_EXIST:
		return value == NULL;
	}
	return false;
}

bool velo_pol_selector_match(const struct velo_pol_selector *selector,
			     const struct velo_pol_labels *labels)
{
	for (unsigned i = 0; i < selector->match.n; i++) {
		const char *value = velo_pol_labels_get(labels, selector->match.items[i].key);

		if (!value || strcmp(value, selector->match.items[i].value))
			return false;
	}
	for (unsigned i = 0; i < selector->n_exprs; i++)
		if (!expr_match(&selector->exprs[i], labels))
			return false;
	return true;
}

bool velo_pol_peer_selects(const struct velo_pol_peer *peer, const char *policy_ns,
			   const char *pod_ns, const struct velo_pol_labels *pod_labels,
			   const struct velo_pol_labels *ns_labels)
{
	if (peer->has_block || (!peer->has_pods && !peer->has_namespaces))
		return false;
	if (peer->has_namespaces) {
		if (!velo_pol_selector_match(&peer->namespaces, ns_labels))
			return false;
	} else if (strcmp(pod_ns, policy_ns)) {
		return false;
	}
	return !peer->has_pods || velo_pol_selector_match(&peer->pods, pod_labels);
}
