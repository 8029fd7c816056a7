/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A Kubernetes resource's LIST and WATCH requests (k8s_list_watch.c). One
 * implementation for every resource velod watches (Nodes, Services,
 * EndpointSlices): a resource is its path and callbacks that keep its objects
 * (k8s_watch_shared.h). The thread (k8s_watch.c) runs these requests.
 */
#ifndef VELOD_K8S_K8S_LIST_WATCH_H
#define VELOD_K8S_K8S_LIST_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "k8s_api_target.h"
#include "k8s_watch_shared.h"

/*
 * LISTs every page (list_begin, list_item...), then list_end, sets watch->rv
 * and watch->n_listed. 0 or -errno with why set: -ESTALE (410: the pages
 * expired), -EACCES (401, 403), -ENOENT (404), -EPROTO, -ECANCELED
 * (stopping)...
 */
int k8s_list_watch_list(struct k8s_watch *watch, const struct k8s_api_target *target, char *why,
			size_t why_size);

/*
 * WATCHes from watch->rv until the server ends the watch, applying each event
 * as it comes (change); *events gets how
 * many arrived. 0 when the watch ended normally, -ESTALE (relist), or another
 * -errno with why set.
 */
int k8s_list_watch_stream(struct k8s_watch *watch, const struct k8s_api_target *target,
			  uint64_t *events, char *why, size_t why_size);

#endif
