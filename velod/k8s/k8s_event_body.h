/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A core/v1 Event that velod posts (k8s_event_body.c): its name, its POST
 * body and the merge patch that counts it again. Core/v1 because it is what
 * `kubectl get events` and `kubectl describe` read, and what kubelet writes:
 * events.k8s.io/v1 shares its storage but needs the newer fields and a second
 * RBAC group. Pure: no API, no clock.
 */
#ifndef VELOD_K8S_K8S_EVENT_BODY_H
#define VELOD_K8S_K8S_EVENT_BODY_H

#include <stddef.h>

#define K8S_EVENT_NAME_MAX 254 /* a DNS subdomain: 253 and '\0' */
#define K8S_EVENT_MESSAGE_MAX 1024 /* longer messages are cut: the API takes 1 KiB for sure */

/* What an Event says, about which object. */
struct k8s_event_note {
	const char *kind; /* "Pod", "NetworkPolicy" */
	const char *api_version; /* the object's: "v1", "networking.k8s.io/v1" */
	const char *ns, *name;
	const char *uid; /* the object's metadata.uid, "" or NULL when velod has none */
	const char *reason; /* CamelCase, "PolicyPodUnplaced" */
	const char *message;
};

/*
 * "<object name>.velo-<16 hex>", the hex a hash of the kind, namespace, name,
 * reason and message: one name per (object, reason) on every node and across
 * restarts, so the API itself refuses a second one (409).
 */
void k8s_event_name(const struct k8s_event_note *note, char name[K8S_EVENT_NAME_MAX]);
/*
 * The Event to POST to /api/v1/namespaces/<ns>/events: a Warning from velod
 * on node (source.host, reportingInstance), first and last seen at time
 * (RFC 3339), count 1. NULL with errno (ENOMEM) otherwise; the caller frees.
 */
char *k8s_event_body(const struct k8s_event_note *note, const char *node, const char *time);
/* The merge patch for a problem still there: count and lastTimestamp; NULL, errno on failure. */
char *k8s_event_patch(unsigned count, const char *time);
/* time as RFC 3339 in UTC ("2026-12-05T19:40:00Z") into buf. */
void k8s_event_time(long long seconds, char *buf, size_t size);

#endif
