/* SPDX-License-Identifier: Apache-2.0 */
/* Node objects into host-gw's node list (k8s_node_list.c). */
#ifndef VELOD_K8S_K8S_NODE_LIST_H
#define VELOD_K8S_K8S_NODE_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "agent/agent.h"

/*
 * A Node object into node: metadata.name, spec.podCIDRs (else spec.podCIDR),
 * the first InternalIP of each family in status.addresses. Returns 0 or
 * -EINVAL with why saying which field.
 */
int k8s_node_parse(const cJSON *json, struct node *node, char *why, size_t why_size);

/*
 * Applies one line of a watch stream to list: ADDED/MODIFIED upsert, DELETED
 * removes, BOOKMARK only moves rv on. Returns 1 when the list changed, 0 when
 * not, -ESTALE for an ERROR event with code 410 (relist), -EPROTO for another
 * ERROR or a line that isn't an event, -EINVAL for a Node it can't use (why
 * says why). rv (rv_size bytes) gets the event's resourceVersion.
 */
int k8s_nodes_apply_event(struct node_list *list, const char *line, size_t len, char *rv,
			  size_t rv_size, char *why, size_t why_size);

/* Adds node to list or replaces the entry of that name: 1 when the list changed, 0 when not,
 * -ENOSPC (why says so) when the list is full. */
int k8s_node_list_upsert(struct node_list *list, const struct node *node, char *why,
			 size_t why_size);

/* Removes the node of that name from list: 1 when it was there, 0 when not. */
int k8s_node_list_remove(struct node_list *list, const char *name);

/* A watch event's Node applied to list (a k8s_event_fn): DELETED removes, else upsert. */
int k8s_node_change(void *list, bool deleted, const cJSON *object, char *why, size_t why_size);

#endif
