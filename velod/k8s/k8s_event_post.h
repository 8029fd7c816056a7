/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes Events about what velod can't use (k8s_event_post.c): a thread
 * POSTs them (k8s_event_body.h, k8s_event_sender.h) with the watches' client
 * setup, from a bounded queue, so velod's loop never waits on the API. One Event per
 * (object, reason): a problem is posted when it appears, counted again (a
 * PATCH of count and lastTimestamp) every K8S_EVENT_REPEAT_S while it stays,
 * and forgotten when it goes. The name is the same on every node and across
 * restarts: a second POST gets 409, and the velod that got it leaves the Event
 * to the one that made it (a NetworkPolicy's problem, seen by every node, is
 * one Event, not one per node).
 */
#ifndef VELOD_K8S_K8S_EVENT_POST_H
#define VELOD_K8S_K8S_EVENT_POST_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/agent.h"
#include "k8s_event_body.h"

#define K8S_EVENT_REPEAT_S 1800 /* a problem still there: counted again (the API keeps 1 h) */
#define K8S_EVENT_RETRY_S 60 /* after a failed request */

struct k8s_event_post;

/*
 * Starts the sender's thread with config's kubeconfig or in-cluster service
 * account. NULL with errno (ENOENT: libcurl is not installed).
 */
struct k8s_event_post *k8s_event_post_start(const struct agent_config *config);
/*
 * Whether a sync is worth building notes for: an answer came back, or a second
 * passed since the last (new problems wait at most that long).
 */
bool k8s_event_post_due(struct k8s_event_post *post, uint64_t now_ns);
/*
 * Every problem velod has now (notes[n]): the new ones queued as POSTs, the
 * ones due counted again, the ones not among them forgotten. Writes the
 * thread's log lines. Never blocks on the API.
 */
void k8s_event_post_sync(struct k8s_event_post *post, const struct k8s_event_note *notes,
			 unsigned n, uint64_t now_ns);
/* Ends the sender (a request in flight is cut within about a second) and frees post. */
void k8s_event_post_stop(struct k8s_event_post *post);

#endif
