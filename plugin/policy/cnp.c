// SPDX-License-Identifier: Apache-2.0
/* ClusterNetworkPolicy objects into velo's structs (cnp.h). */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "bpf/lib/velo_policy.h"
#include "policy/cidr.h"
#include "policy/cnp.h"
#include "policy/cnp_ports.h"
#include "policy/json.h"
#include "policy/object.h"

#define CNP_LIST_MAX 25 /* the API's bound on rules, peers, networks and protocols */

static void cnp_rules_free(struct velo_pol_cnp_rule *rules, unsigned n)
{
	for (unsigned r = 0; r < n; r++) {
		for (unsigned p = 0; p < rules[r].n_peers; p++) {
			velo_pol_selector_free(&rules[r].peers[p].namespaces);
			velo_pol_selector_free(&rules[r].peers[p].pods);
			velo_pol_selector_free(&rules[r].peers[p].nodes);
			free(rules[r].peers[p].networks);
		}
		free(rules[r].peers);
		free(rules[r].ports);
	}
	free(rules);
}

void velo_pol_cnp_free(struct velo_pol_cnp *cnp)
{
	velo_pol_selector_free(&cnp->subject_ns);
	velo_pol_selector_free(&cnp->subject_pods);
	cnp_rules_free(cnp->ingress_rules, cnp->n_ingress);
	cnp_rules_free(cnp->egress_rules, cnp->n_egress);
	free(cnp->problem);
	memset(cnp, 0, sizeof(*cnp));
}

/* A member that is absent or null. */
static const cJSON *member(const cJSON *object, const char *name)
{
	const cJSON *item = velo_json_field(object, name);

	return item && !cJSON_IsNull(item) ? item : NULL;
}

/* "pods": {namespaceSelector, podSelector}; either selector absent selects everything. */
static int namespaced_pod_parse(const cJSON *json, struct velo_pol_selector *namespaces,
				struct velo_pol_selector *pods)
{
	const cJSON *ns = member(json, "namespaceSelector"), *pod = member(json, "podSelector");
	int ret;

	if (!cJSON_IsObject(json))
		return -EINVAL;
	ret = ns ? velo_pol_json_selector(ns, namespaces) : 0;
	if (!ret && pod)
		ret = velo_pol_json_selector(pod, pods);
	return ret;
}

static int networks_parse(const cJSON *json, struct velo_pol_cnp_peer *out)
{
	const cJSON *item;

	if (!cJSON_IsArray(json) || !cJSON_GetArraySize(json) ||
	    cJSON_GetArraySize(json) > CNP_LIST_MAX)
		return -EINVAL;
	out->networks = calloc((size_t)cJSON_GetArraySize(json), sizeof(*out->networks));
	if (!out->networks)
		return -ENOMEM;
	cJSON_ArrayForEach (item, json)
		if (!cJSON_IsString(item) || velo_pol_cidr_parse(item->valuestring, false,
								 &out->networks[out->n_networks++]))
			return -EINVAL;
	return 0;
}

/*
 * One peer: 0, -EINVAL (unreadable: fails closed), -ENOTSUP (a kind velo
 * doesn't enforce: matches nothing), -ENOMEM.
 */
static int peer_parse(const cJSON *json, bool egress, struct velo_pol_cnp_peer *out)
{
	const cJSON *namespaces = member(json, "namespaces"), *pods = member(json, "pods");
	const cJSON *networks = egress ? member(json, "networks") : NULL;
	const cJSON *nodes = egress ? member(json, "nodes") : NULL;
	unsigned kinds = !!namespaces + !!pods + !!networks + !!nodes;

	if (!cJSON_IsObject(json))
		return -EINVAL;
	if (egress && !kinds && member(json, "domainNames"))
		return -ENOTSUP;
	if (kinds != 1)
		return -EINVAL;
	if (namespaces) {
		out->kind = VELO_POL_CNP_PEER_NAMESPACES;
		return velo_pol_json_selector(namespaces, &out->namespaces);
	}
	if (pods) {
		out->kind = VELO_POL_CNP_PEER_PODS;
		return namespaced_pod_parse(pods, &out->namespaces, &out->pods);
	}
	if (nodes) {
		out->kind = VELO_POL_CNP_PEER_NODES;
		return velo_pol_json_selector(nodes, &out->nodes);
	}
	out->kind = VELO_POL_CNP_PEER_NETWORKS;
	return networks_parse(networks, out);
}

static int action_parse(const cJSON *json, uint8_t *action)
{
	const cJSON *item = velo_json_field(json, "action");

	if (!cJSON_IsString(item))
		return -EINVAL;
	if (!strcmp(item->valuestring, "Accept"))
		*action = VELO_POL_ACTION_ACCEPT;
	else if (!strcmp(item->valuestring, "Deny"))
		*action = VELO_POL_ACTION_DENY;
	else if (!strcmp(item->valuestring, "Pass"))
		*action = VELO_POL_ACTION_PASS;
	else
		return -EINVAL;
	return 0;
}

/* A rule that failed closed: an Accept matches nothing (dropped), a Deny or Pass denies all. */
static void rule_close(struct velo_pol_cnp_rule *rule)
{
	struct velo_pol_cnp_rule closed = { .action = VELO_POL_ACTION_DENY, .any_peer = true };

	for (unsigned p = 0; p < rule->n_peers; p++) {
		velo_pol_selector_free(&rule->peers[p].namespaces);
		velo_pol_selector_free(&rule->peers[p].pods);
		velo_pol_selector_free(&rule->peers[p].nodes);
		free(rule->peers[p].networks);
	}
	free(rule->peers);
	free(rule->ports);
	*rule = closed;
}

/* The rule's peers: unreadable ones fail the rule (-EINVAL), unenforced ones are left out. */
static int peers_parse(const cJSON *list, bool egress, struct velo_pol_cnp_rule *rule, bool *unsup)
{
	const cJSON *item;

	if (!cJSON_IsArray(list) || !cJSON_GetArraySize(list) ||
	    cJSON_GetArraySize(list) > CNP_LIST_MAX)
		return -EINVAL;
	rule->peers = calloc((size_t)cJSON_GetArraySize(list), sizeof(*rule->peers));
	if (!rule->peers)
		return -ENOMEM;
	cJSON_ArrayForEach (item, list) {
		int ret = peer_parse(item, egress, &rule->peers[rule->n_peers]);

		if (ret == -ENOTSUP) {
			*unsup = true;
			continue;
		}
		rule->n_peers++;
		if (ret)
			return ret;
	}
	return 0;
}

/* spec.ingress or spec.egress into *rules, each rule read or closed (noted). */
static int rules_parse(const cJSON *spec, bool egress, struct velo_pol_cnp_rule **rules,
		       unsigned *n, char *notes)
{
	const char *field = egress ? "egress" : "ingress";
	const cJSON *list = member(spec, field), *item;
	unsigned i = 0;

	if (!list)
		return 0;
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > CNP_LIST_MAX) {
		/* Unknown rules: one that denies all keeps the direction closed. */
		list = NULL;
		velo_pol_note(notes, VELO_POL_PROBLEM_MAX, "spec.%s: not a list (denies all)",
			      field);
	}
	*rules = calloc(list ? (size_t)cJSON_GetArraySize(list) : 1, sizeof(**rules));
	if (!*rules)
		return -ENOMEM;
	if (!list) {
		rule_close(&(*rules)[(*n)++]);
		return 0;
	}
	cJSON_ArrayForEach (item, list) {
		struct velo_pol_cnp_rule *rule = &(*rules)[*n];
		bool unsup = false;
		int ret = action_parse(item, &rule->action);

		if (!ret)
			ret = peers_parse(member(item, egress ? "to" : "from"), egress, rule,
					  &unsup);
		if (!ret)
			ret = velo_pol_cnp_ports_parse(member(item, "protocols"), rule);
		if (ret == -ENOMEM)
			return ret;
		if (unsup)
			velo_pol_note(notes, VELO_POL_PROBLEM_MAX,
				      "spec.%s[%u]: domainNames peers not enforced (match nothing)",
				      field, i);
		if (ret && rule->action == VELO_POL_ACTION_ACCEPT) {
			rule_close(rule);
			rule->n_peers = 0; /* left out: matches nothing */
			rule->any_peer = false;
			rule->action = VELO_POL_ACTION_ACCEPT;
			velo_pol_note(notes, VELO_POL_PROBLEM_MAX,
				      "spec.%s[%u]: unreadable (matches nothing)", field, i);
		} else if (ret) {
			rule_close(rule);
			velo_pol_note(notes, VELO_POL_PROBLEM_MAX,
				      "spec.%s[%u]: unreadable (denies all)", field, i);
		}
		(*n)++;
		i++;
	}
	return 0;
}

/* The subject; 1 when it can't be read. */
static int subject_parse(const cJSON *spec, struct velo_pol_cnp *out)
{
	const cJSON *subject = member(spec, "subject");
	const cJSON *namespaces = member(subject, "namespaces"), *pods = member(subject, "pods");

	if (!cJSON_IsObject(subject) || !!namespaces + !!pods != 1)
		return 1;
	if (namespaces)
		return velo_pol_json_selector(namespaces, &out->subject_ns) ? 1 : 0;
	out->has_subject_pods = true;
	return namespaced_pod_parse(pods, &out->subject_ns, &out->subject_pods) ? 1 : 0;
}

/*
 * Only Deny rules kept (with a subject velod can't read: every pod): what
 * the others would accept or pass could open what a later rule closes.
 */
static void keep_denies(struct velo_pol_cnp_rule *rules, unsigned *n)
{
	unsigned kept = 0;

	for (unsigned r = 0; r < *n; r++) {
		if (rules[r].action != VELO_POL_ACTION_DENY) {
			rule_close(&rules[r]);
			continue;
		}
		rules[kept++] = rules[r];
	}
	*n = kept;
}

static int spec_parse(const cJSON *spec, struct velo_pol_cnp *out, char *notes)
{
	const cJSON *tier = velo_json_field(spec, "tier");
	int priority;
	int ret;

	if (cJSON_IsString(tier) && !strcmp(tier->valuestring, "Baseline"))
		out->baseline = true;
	else if (!cJSON_IsString(tier) || strcmp(tier->valuestring, "Admin"))
		velo_pol_note(notes, VELO_POL_PROBLEM_MAX,
			      "spec.tier: unreadable (taken as Admin)");
	if (velo_json_int(velo_json_field(spec, "priority"), 0, 1000, &priority)) {
		out->priority = (uint16_t)priority;
	} else {
		velo_pol_note(notes, VELO_POL_PROBLEM_MAX,
			      "spec.priority: unreadable (taken as 0)");
	}
	ret = rules_parse(spec, false, &out->ingress_rules, &out->n_ingress, notes);
	if (!ret)
		ret = rules_parse(spec, true, &out->egress_rules, &out->n_egress, notes);
	if (!ret && subject_parse(spec, out)) {
		velo_pol_selector_free(&out->subject_ns);
		velo_pol_selector_free(&out->subject_pods);
		out->has_subject_pods = false;
		keep_denies(out->ingress_rules, &out->n_ingress);
		keep_denies(out->egress_rules, &out->n_egress);
		velo_pol_note(notes, VELO_POL_PROBLEM_MAX,
			      "spec.subject: unreadable (every pod, its Deny rules only)");
	}
	return ret;
}

int velo_pol_cnp_parse(const cJSON *json, struct velo_pol_cnp *out, char *why, size_t why_size)
{
	const cJSON *spec = velo_json_field(json, "spec");
	char notes[VELO_POL_PROBLEM_MAX] = "";
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (velo_pol_json_meta(json, NULL, out->name, sizeof(out->name))) {
		snprintf(why, why_size, "a ClusterNetworkPolicy without a usable metadata.name");
		return -EINVAL;
	}
	velo_pol_json_uid(json, out->uid);
	out->audit = velo_pol_json_annotated(json, VELO_POL_AUDIT_KEY);
	if (cJSON_IsObject(spec)) {
		ret = spec_parse(spec, out, notes);
	} else {
		/* Nothing known: every pod, both directions denied. */
		velo_pol_note(notes, sizeof(notes), "spec: not an object (every pod denied)");
		out->ingress_rules = calloc(1, sizeof(*out->ingress_rules));
		out->egress_rules = calloc(1, sizeof(*out->egress_rules));
		if (!out->ingress_rules || !out->egress_rules)
			ret = -ENOMEM;
		else {
			rule_close(&out->ingress_rules[out->n_ingress++]);
			rule_close(&out->egress_rules[out->n_egress++]);
		}
	}
	if (!ret && notes[0] && !(out->problem = strdup(notes)))
		ret = -ENOMEM;
	if (ret) {
		snprintf(why, why_size, "ClusterNetworkPolicy %s: out of memory", out->name);
		velo_pol_cnp_free(out);
		return ret;
	}
	if (out->problem)
		snprintf(why, why_size, "ClusterNetworkPolicy %s: %s", out->name, out->problem);
	return 0;
}
