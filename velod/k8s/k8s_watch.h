/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A watch of one Kubernetes resource (k8s_watch.c): a thread LISTs the
 * resource's path, then WATCHes from the list's resourceVersion and hands every
 * object to the resource's callbacks (k8s_watch_shared.h), which wake velod's
 * loop (an eventfd) when they changed something. 410 Gone relists; failures back
 * off. velod's loop never blocks on the API. Every watch velod runs belongs
 * to a watch set (k8s_watch_set.h), which gives it its callbacks.
 */
#ifndef VELOD_K8S_K8S_WATCH_H
#define VELOD_K8S_K8S_WATCH_H

#include "agent/agent.h"
#include "k8s_list_watch.h"

/*
 * Starts the thread for resource with config's kubeconfig or in-cluster
 * service account. NULL with errno (ENOENT: libcurl is not installed).
 */
struct k8s_watch *k8s_watch_start(const struct k8s_resource *resource,
				  const struct agent_config *config);
/* Readable when the resource changed or the thread has log lines; k8s_watch_take drains it. */
int k8s_watch_fd(const struct k8s_watch *watch);
/* Makes the fd readable: the resource's callbacks changed what it keeps (any thread). */
void k8s_watch_wake(struct k8s_watch *watch);
/* Drains the fd and writes the thread's queued log lines (velod's loop). */
void k8s_watch_take(struct k8s_watch *watch);
void k8s_watch_stats(struct k8s_watch *watch, struct k8s_watch_stats *stats);
/* Tells the thread to end, without waiting: several watches then end in one second. */
void k8s_watch_cancel(struct k8s_watch *watch);
/* Ends the thread (it notices within about a second) and frees the watch. */
void k8s_watch_stop(struct k8s_watch *watch);

#endif
