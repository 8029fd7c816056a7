/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What velod's policy state shows (policy_show.c): GET /policy for veloctl,
 * and the names of the pods and policies behind drops and audits for flows
 * and /metrics.
 */
#ifndef VELOD_POLICY_POLICY_SHOW_H
#define VELOD_POLICY_POLICY_SHOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"

/*
 * GET /policy (pod NULL: this node's pods) or /policy?pod=ns/name: a JSON
 * body (caller frees) and its HTTP status (404 for an unknown pod, 503 before
 * the first sync), an {"error": ...} body for either.
 */
char *policy_http(const struct policy *policy, const char *pod, unsigned *status);
/*
 * The NetworkPolicies that isolate identity's pods for ingress (else egress),
 * "ns/name,..." into buf: what a policy drop charged to identity ran into
 * (flows). "" without a policy source, before its first sync, or for an
 * identity no pod of this node has.
 */
void policy_isolating(const struct policy *policy, uint32_t identity, bool ingress, char *buf,
		      size_t len);
struct policy_report;
/* What the last sync could not use or place (policy_report.h), NULL without a source. */
const struct policy_report *policy_problems(const struct policy *policy);
/* "ns/name" of the local pod with addr (::ffff:a.b.c.d for IPv4) into buf, or NULL. */
const char *policy_pod_of(const struct policy *policy, const uint8_t addr[16], char *buf,
			  size_t len);

/*
 * The ClusterNetworkPolicy velod numbered id, "Admin:name" or
 * "Baseline:name" (no namespace has a ':', so it can't be read as a
 * NetworkPolicy's "ns/name") into buf; "" when it knows none.
 */
void policy_cnp_name(const struct policy *policy, uint32_t id, char *buf, size_t len);

/*
 * GET /policy/why?src=IP&dst=IP&port=N&proto=P: the verdict the last sync's
 * tables give that flow's first packet, side by side, and what decided each
 * side (tier and rule, NetworkPolicy, default). 400 for a bad query.
 */
char *policy_why_http(const struct policy *policy, const char *src, const char *dst,
		      const char *proto, const char *port, unsigned *status);

#endif
