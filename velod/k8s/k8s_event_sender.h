/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sending Event requests (k8s_event_sender.c): a thread takes them from a
 * bounded queue and sends them one at a time with the watches' client setup,
 * so velod's loop never waits on the API; the loop takes the answers back at
 * its next sync (k8s_event_post.h).
 */
#ifndef VELOD_K8S_K8S_EVENT_SENDER_H
#define VELOD_K8S_K8S_EVENT_SENDER_H

#include <stdbool.h>

#include "agent/agent.h"
#include "k8s_event_body.h"

#define K8S_EVENT_QUEUE 32 /* requests waiting for the thread; more are dropped, and logged */
#define K8S_EVENT_NS_MAX 64 /* a namespace: a DNS label */
#define K8S_EVENT_WHY_MAX 200

/* One request for the thread, and then its answer for the loop. */
struct k8s_event_request {
	bool patch; /* else POST */
	char ns[K8S_EVENT_NS_MAX];
	char name[K8S_EVENT_NAME_MAX];
	char *body;
	long status; /* the answer's HTTP status; 0: none (why says what failed) */
	char why[K8S_EVENT_WHY_MAX];
};

struct k8s_event_sender;

/*
 * Starts the thread with config's kubeconfig or in-cluster service account.
 * NULL with errno (ENOENT: libcurl is not installed).
 */
struct k8s_event_sender *k8s_event_sender_start(const struct agent_config *config);
/*
 * Queues a POST (or with patch a PATCH) of body, which the queue then owns;
 * false (body freed) when the queue is full.
 */
bool k8s_event_sender_queue(struct k8s_event_sender *sender, bool patch, const char *ns,
			    const char *name, char *body);
/* Whether an answer waits. */
bool k8s_event_sender_answered(struct k8s_event_sender *sender);
/* Moves the answers into done (never more than K8S_EVENT_QUEUE + 1); how many. */
unsigned k8s_event_sender_answers(struct k8s_event_sender *sender,
				  struct k8s_event_request done[K8S_EVENT_QUEUE + 1]);
/* Ends the thread (a request in flight is cut within about a second) and frees sender. */
void k8s_event_sender_stop(struct k8s_event_sender *sender);

#endif
