/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Node watch (k8s_nodes.c): host-gw's node list from the Kubernetes API,
 * a watch set (k8s_watch_set.h) of /api/v1/nodes that keeps the list in
 * memory and wakes velod's loop when a node's name, pod CIDRs or InternalIPs
 * changed. Its fd, stats and stop are the set's.
 */
#ifndef VELOD_K8S_K8S_NODES_H
#define VELOD_K8S_K8S_NODES_H

#include "agent/agent.h"
#include "k8s_watch_set.h"

/* Starts the watch for config's API source. NULL with errno (ENOENT: no libcurl). */
struct k8s_watch_set *k8s_nodes_start(const struct agent_config *config);
/* 1 and the list copied into list when it changed since the last take, 0 when not, -EAGAIN
 * before the first LIST. list->self is left NULL. */
int k8s_nodes_take(struct k8s_watch_set *nodes, struct node_list *list);

#endif
