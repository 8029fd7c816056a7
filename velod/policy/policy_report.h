/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What velod could not use of the policy objects, and which pods of this
 * node it could not place, with why (policy_report.c): collected at each
 * sync from the objects and the tables, logged when it changes, shown in
 * /metrics (velo_policy_object_errors, velo_policy_unplaced_pods) and in
 * GET /policy's "problems" (veloctl policy), and as Kubernetes Events
 * (k8s_event_post.h). Pure but for the log and the Events.
 */
#ifndef VELOD_POLICY_POLICY_REPORT_H
#define VELOD_POLICY_POLICY_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cJSON.h>

#include "policy/objects.h"
#include "policy/table.h"

struct k8s_event_post;

struct policy_problem {
	const char *kind; /* "Pod", "NetworkPolicy" or "ClusterNetworkPolicy" (ns "") */
	char ns[VELO_POL_NS_MAX];
	char name[VELO_POL_NAME_MAX];
	char uid[VELO_POL_UID_MAX]; /* the object's, "" when velod has none */
	char *reason;
	/* A pod of this node velod could not place (with programs, its traffic waits: pending). */
	bool unplaced;
	bool local; /* a pod of this node (placed or not) */
};

/* Sorted by kind, namespace, name, unplaced. */
struct policy_report {
	unsigned n;
	struct policy_problem *items;
};

/*
 * Every object with a problem (parse.h, netpol.h), and each pod of this node
 * that tables could not place in a namespace holding a NetworkPolicy (where
 * its programs hold its traffic), into out (zeroed first): 0 or -ENOMEM.
 */
int policy_report_collect(const struct velo_pol_objects *objects,
			  const struct velo_pol_tables *tables, struct policy_report *out);
/* One log line per problem in now and not in old, one per problem gone. */
void policy_report_log(const struct policy_report *old, const struct policy_report *now);
/* velo_policy_object_errors{kind,namespace,name,reason} and velo_policy_unplaced_pods{...}. */
void policy_report_metrics(const struct policy_report *report, FILE *text);
/*
 * answer's "problems": [{kind, namespace, name, reason, unplaced}], for pod
 * ("ns/name") only its own and its namespace's NetworkPolicies', NULL: all.
 */
void policy_report_json(const struct policy_report *report, const char *pod, cJSON *answer);
/*
 * An Event (k8s_event_post.h) for each problem of a pod of this node and each
 * NetworkPolicy's: post NULL does nothing.
 */
void policy_report_events(const struct policy_report *report, struct k8s_event_post *post,
			  uint64_t now_ns);
void policy_report_free(struct policy_report *report);

#endif
