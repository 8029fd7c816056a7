/* SPDX-License-Identifier: Apache-2.0 */
/* The Node watch's LIST and WATCH of /api/v1/nodes (k8s_list_watch.c), run by its thread. */
#ifndef VELOD_K8S_LIST_WATCH_H
#define VELOD_K8S_LIST_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "k8s/kubeconfig.h"
#include "k8s_nodes.h"

/*
 * LISTs every page into watch->scratch, then makes it watch->current, sets
 * watch->rv and publishes the list. 0 or -errno with why set: -ESTALE (410:
 * the pages expired), -EACCES, -EPROTO, -ECANCELED (stopping)...
 */
int k8s_list_nodes(struct k8s_nodes *watch, const struct k8s_api_target *target, char *why,
		   size_t why_size);

/*
 * WATCHes from watch->rv until the server ends the watch, applying each event
 * to watch->current as it comes; *events gets how many arrived. 0 when the
 * watch ended normally, -ESTALE (relist), or another -errno with why set.
 */
int k8s_watch_nodes(struct k8s_nodes *watch, const struct k8s_api_target *target, uint64_t *events,
		    char *why, size_t why_size);

#endif
