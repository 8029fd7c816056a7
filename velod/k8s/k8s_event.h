/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One line of a Kubernetes watch stream (k8s_event.c), for any resource: the
 * event's type and object, BOOKMARK and ERROR handled here, the object handed
 * to the resource's callback. Pure: no I/O, no thread.
 */
#ifndef VELOD_K8S_K8S_EVENT_H
#define VELOD_K8S_K8S_EVENT_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

/*
 * A resource's change: ADDED and MODIFIED (deleted false) or DELETED of
 * object. 1 when what the watch keeps changed, 0 when not, -EINVAL for an
 * object it can't use, -ENOSPC when full (why says why), -ENOMEM.
 */
typedef int (*k8s_event_fn)(void *ctx, bool deleted, const cJSON *object, char *why,
			    size_t why_size);

/*
 * Applies one line of a watch stream: rv (rv_size bytes) gets the event's
 * resourceVersion (BOOKMARK only moves it on), change gets the rest.
 * Returns change's answer, 0 for a bookmark, -ESTALE for an ERROR event with
 * code 410 (relist), -EPROTO for another ERROR or a line that isn't an event.
 */
int k8s_event_apply(const char *line, size_t len, char *rv, size_t rv_size, k8s_event_fn change,
		    void *ctx, char *why, size_t why_size);

/* object's metadata.resourceVersion into rv when it has one that fits; rv is kept otherwise. */
void k8s_resource_version(const cJSON *object, char *rv, size_t rv_size);

#endif
