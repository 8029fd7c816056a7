/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Node watch (k8s_nodes.c): host-gw's node list from the Kubernetes API,
 * a watch of /api/v1/nodes (k8s_watch.h) that keeps the list in memory and
 * wakes velod's loop when a node's name, pod CIDRs or InternalIPs changed.
 */
#ifndef VELOD_K8S_K8S_NODES_H
#define VELOD_K8S_K8S_NODES_H

#include "agent/agent.h"
#include "k8s_list_watch.h"

struct k8s_nodes;

/* Starts the watch for config's API source. NULL with errno (ENOENT: no libcurl). */
struct k8s_nodes *k8s_nodes_start(const struct agent_config *config);
/* Readable when the list changed; k8s_nodes_take drains it. */
int k8s_nodes_fd(const struct k8s_nodes *nodes);
/* 1 and the list copied into list when it changed since the last take, 0 when not, -EAGAIN
 * before the first LIST. list->self is left NULL. */
int k8s_nodes_take(struct k8s_nodes *nodes, struct node_list *list);
void k8s_nodes_stats(struct k8s_nodes *nodes, struct k8s_watch_stats *stats);
/* Ends the watch (within about a second) and frees everything. */
void k8s_nodes_stop(struct k8s_nodes *nodes);

#endif
