/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One policy object (object.c): its release, its labels, and whether two
 * versions of it are the same for policy (a status heartbeat changes nothing).
 */
#ifndef VELO_POLICY_OBJECT_H
#define VELO_POLICY_OBJECT_H

#include <stdbool.h>

#include "policy/objects.h"

void velo_pol_labels_free(struct velo_pol_labels *labels);
/* The value of key, or NULL (labels sorted). */
const char *velo_pol_labels_get(const struct velo_pol_labels *labels, const char *key);
void velo_pol_selector_free(struct velo_pol_selector *selector);
void velo_pol_namespace_free(struct velo_pol_namespace *ns);
void velo_pol_pod_free(struct velo_pol_pod *pod);
void velo_pol_node_free(struct velo_pol_node_obj *node);
/* Whether two Nodes are the same for policy (labels and addresses: a status heartbeat isn't). */
bool velo_pol_node_equal(const struct velo_pol_node_obj *a, const struct velo_pol_node_obj *b);
void velo_pol_netpol_free(struct velo_pol_netpol *netpol);

/* Whether two pods or namespaces are the same for policy (a status heartbeat changes nothing). */
bool velo_pol_pod_equal(const struct velo_pol_pod *a, const struct velo_pol_pod *b);
bool velo_pol_namespace_equal(const struct velo_pol_namespace *a,
			      const struct velo_pol_namespace *b);

#endif
