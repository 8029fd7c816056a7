/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NetworkPolicy in velod (policy.c): Namespaces, Pods and NetworkPolicies
 * from policyFile or the API's watches (policySource), this node's pods from
 * the endpoint records, the maps computed (policy/table.h) and written
 * (datapath/policy_maps.h) whenever either changes, at most every
 * policySyncMs; then <runDir>/policy/namespaces for ADD, and the programs
 * attached to the pods some policy selects and detached from the others.
 */
#ifndef VELOD_POLICY_POLICY_H
#define VELOD_POLICY_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"

/* Starts the source (the API's watches with policySource "api"): 0 or -errno. */
int policy_start(struct policy *policy, const struct agent_config *config);
/* The watches' fds (i < 3) for velod's select, -1 without them. */
int policy_fd(const struct policy *policy, unsigned i);
void policy_step(struct policy *policy, const struct agent_config *config, uint64_t now_ns);
uint64_t policy_deadline(const struct policy *policy);
void policy_stop(struct policy *policy);

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

#endif
