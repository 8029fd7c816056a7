// SPDX-License-Identifier: Apache-2.0
/*
 * veloctl policy [NAMESPACE/NAME]: NetworkPolicy as velod computed it
 * (docs/policy.md), from its GET /policy endpoint. For one pod: the policies
 * that select it, whether it is isolated for ingress and egress, and its
 * effective allow set (each rule: the policy it came from, its peers and
 * ports); without a pod, one line per pod of this node. -j prints velod's
 * answer as it is, so tools see every field velod has.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_policy.h"
#include "ctl.h"
#include "http_get.h"

static const cJSON *field(const cJSON *json, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(json, key);
}

/* A namespace/name of DNS-1123 characters, so it goes into the query as it is. */
static bool valid_pod(const char *pod)
{
	const char *slash = strchr(pod, '/');

	if (!slash || slash == pod || !slash[1] || strchr(slash + 1, '/') || strlen(pod) > 320)
		return false;
	for (const char *c = pod; *c; c++)
		if (!islower((unsigned char)*c) && !isdigit((unsigned char)*c) && *c != '-' &&
		    *c != '.' && *c != '/')
			return false;
	return true;
}

/* A value as text: strings as they are, numbers, booleans, else compact JSON. */
static void print_value(const cJSON *item)
{
	char *text;

	if (cJSON_IsString(item)) {
		fputs(item->valuestring, stdout);
		return;
	}
	if (cJSON_IsNumber(item)) {
		printf("%g", item->valuedouble);
		return;
	}
	text = cJSON_PrintUnformatted(item);
	fputs(text ? text : "?", stdout);
	cJSON_free(text);
}

/* An array's items separated by ", "; "-" when it is empty or missing. */
static void print_list(const cJSON *array)
{
	const cJSON *item;
	bool first = true;

	if (!cJSON_IsArray(array) || !cJSON_GetArraySize(array)) {
		fputs(cJSON_IsArray(array) ? "any" : "-", stdout);
		return;
	}
	cJSON_ArrayForEach (item, array) {
		if (!first)
			fputs(", ", stdout);
		print_value(item);
		first = false;
	}
}

static const char *yes_no(const cJSON *item)
{
	return cJSON_IsTrue(item) ? "yes" : cJSON_IsFalse(item) ? "no" : "-";
}

/*
 * The order each direction is judged in: the Admin tier's ClusterNetworkPolicies,
 * the NetworkPolicies (above), the Baseline tier's.
 */
static void print_tiers(const cJSON *tiers)
{
	static const char *const order[] = { "Admin", "Baseline" };
	const cJSON *cnp;

	if (!cJSON_GetArraySize(tiers))
		return;
	printf("tiers (first match decides; Admin, then NetworkPolicy, then Baseline):\n");
	for (unsigned t = 0; t < 2; t++)
		cJSON_ArrayForEach (cnp, tiers) {
			const cJSON *tier = field(cnp, "tier"), *problem = field(cnp, "problem");

			if (!cJSON_IsString(tier) || strcmp(tier->valuestring, order[t]))
				continue;
			printf("  %-8s priority %-4d %s (ingress rules %d, egress rules %d)%s%s\n",
			       order[t], field(cnp, "priority")->valueint,
			       field(cnp, "name")->valuestring, field(cnp, "ingress")->valueint,
			       field(cnp, "egress")->valueint, cJSON_IsString(problem) ? ": " : "",
			       cJSON_IsString(problem) ? problem->valuestring : "");
		}
}

/* The policies that select the pod: "ns/name (Ingress, Egress)" each. */
static void print_policies(const cJSON *policies)
{
	const cJSON *policy;

	if (!cJSON_GetArraySize(policies)) {
		printf("policies:  none select this pod\n");
		return;
	}
	printf("policies:\n");
	cJSON_ArrayForEach (policy, policies) {
		const cJSON *ns = field(policy, "namespace"), *name = field(policy, "name");

		if (!cJSON_IsObject(policy)) {
			printf("  ");
			print_value(policy);
			printf("\n");
			continue;
		}
		printf("  %s/%s", cJSON_IsString(ns) ? ns->valuestring : "-",
		       cJSON_IsString(name) ? name->valuestring : "-");
		if (field(policy, "policyTypes")) {
			printf(" (");
			print_list(field(policy, "policyTypes"));
			printf(")");
		}
		printf("\n");
	}
}

/* One direction's allow set: "from|to PEERS  ports PORTS  (POLICY)" per rule. */
static void print_rules(const char *direction, const cJSON *isolated, const cJSON *rules)
{
	const char *peers_key = strcmp(direction, "ingress") ? "to" : "from";
	const cJSON *rule;

	if (!cJSON_IsTrue(isolated)) {
		printf("%s: not isolated (every peer and port allowed)\n", direction);
		return;
	}
	if (!cJSON_GetArraySize(rules)) {
		printf("%s: isolated, nothing allowed\n", direction);
		return;
	}
	printf("%s: isolated, allowed:\n", direction);
	cJSON_ArrayForEach (rule, rules) {
		const cJSON *peers = field(rule, peers_key);

		if (!peers)
			peers = field(rule, "peers");
		printf("  %s ", peers_key);
		print_list(peers);
		printf("  ports ");
		print_list(field(rule, "ports"));
		if (field(rule, "policy")) {
			printf("  (");
			print_value(field(rule, "policy"));
			printf(")");
		}
		printf("\n");
	}
}

/* velod's problems: a NetworkPolicy or Pod it could not use, a pod it could not place. */
static void print_problems(const cJSON *problems)
{
	const cJSON *item;

	if (!cJSON_GetArraySize(problems))
		return;
	printf("problems:\n");
	cJSON_ArrayForEach (item, problems) {
		const cJSON *kind = field(item, "kind"), *ns = field(item, "namespace");
		const cJSON *name = field(item, "name"), *reason = field(item, "reason");

		/* A cluster-scoped object (ClusterNetworkPolicy) has no namespace. */
		bool scoped = cJSON_IsString(ns) && ns->valuestring[0];

		printf("  %s %s%s%s%s: %s\n", cJSON_IsString(kind) ? kind->valuestring : "-",
		       scoped ? ns->valuestring : "", scoped ? "/" : "",
		       cJSON_IsString(name) ? name->valuestring : "-",
		       cJSON_IsTrue(field(item, "unplaced")) ? " not placed" : "",
		       cJSON_IsString(reason) ? reason->valuestring : "-");
	}
}

static void print_pod(const cJSON *json)
{
	const cJSON *isolation = field(json, "isolation");
	const cJSON *item;

	printf("pod:       ");
	print_value(field(json, "pod"));
	printf("\n");
	if ((item = field(json, "addresses"))) {
		printf("addresses: ");
		print_list(item);
		printf("\n");
	}
	if ((item = field(json, "identity"))) {
		printf("identity:  ");
		print_value(item);
		printf("\n");
	}
	if ((item = field(json, "revision"))) {
		printf("revision:  ");
		print_value(item);
		printf("\n");
	}
	printf("isolated:  ingress %s, egress %s\n", yes_no(field(isolation, "ingress")),
	       yes_no(field(isolation, "egress")));
	print_policies(field(json, "policies"));
	print_rules("ingress", field(isolation, "ingress"), field(json, "ingress"));
	print_rules("egress", field(isolation, "egress"), field(json, "egress"));
	print_tiers(field(json, "clusterNetworkPolicies"));
	print_problems(field(json, "problems"));
}

/* Every local pod: POD  INGRESS  EGRESS  POLICIES. */
static void print_pods(const cJSON *json)
{
	const cJSON *pod;

	if (field(json, "revision")) {
		printf("revision ");
		print_value(field(json, "revision"));
		printf("\n");
	}
	printf("%-40s %-8s %-8s %s\n", "POD", "INGRESS", "EGRESS", "POLICIES");
	cJSON_ArrayForEach (pod, field(json, "pods")) {
		const cJSON *isolation = field(pod, "isolation");
		const cJSON *policies = field(pod, "policies"), *policy;
		bool first = true;
		char name[400];

		if (cJSON_IsString(field(pod, "pod")))
			snprintf(name, sizeof(name), "%s", field(pod, "pod")->valuestring);
		else
			snprintf(name, sizeof(name), "-");
		printf("%-40s %-8s %-8s ", name,
		       cJSON_IsTrue(field(isolation, "ingress")) ? "isolated" : "open",
		       cJSON_IsTrue(field(isolation, "egress")) ? "isolated" : "open");
		cJSON_ArrayForEach (policy, policies) {
			const cJSON *ns = field(policy, "namespace"),
				    *pname = field(policy, "name");

			if (!first)
				fputs(", ", stdout);
			first = false;
			if (cJSON_IsString(ns) && cJSON_IsString(pname))
				printf("%s/%s", ns->valuestring, pname->valuestring);
			else
				print_value(policy);
		}
		printf("%s\n", first ? "-" : "");
	}
	print_problems(field(json, "problems"));
}

/* One side of policy why: "egress of POD: allowed by Admin tier Admin:name rule 2 (Accept)". */
static void print_side(const char *direction, const cJSON *side)
{
	const cJSON *pod = field(side, "pod"), *policy = field(side, "policy");
	const cJSON *rule = field(side, "rule"), *action = field(side, "action");

	if (!cJSON_IsObject(side))
		return;
	printf("%-8s %s: %s by %s", direction,
	       cJSON_IsString(pod) && pod->valuestring[0] ? pod->valuestring
							  : "(not this node's pod)",
	       cJSON_IsTrue(field(side, "allowed")) ? "allowed" : "DROPPED",
	       field(side, "decidedBy")->valuestring);
	if (cJSON_IsString(policy) && policy->valuestring[0])
		printf(" %s", policy->valuestring);
	if (cJSON_IsNumber(rule))
		printf(" rule %d (%s)", rule->valueint, action->valuestring);
	printf("\n");
}

static void print_why(const cJSON *json)
{
	printf("verdict: %s\n", field(json, "verdict")->valuestring);
	print_side("egress", field(json, "egress"));
	print_side("ingress", field(json, "ingress"));
}

/* The query of policy why: PORT[/PROTO] split, addresses checked as velod checks them. */
static int why_path(const struct ctl *ctl, char *path, size_t len)
{
	char port[16], proto[16] = "tcp";
	const char *slash = strchr(ctl->why[2], '/');
	size_t n = slash ? (size_t)(slash - ctl->why[2]) : strlen(ctl->why[2]);

	if (n == 0 || n >= sizeof(port) || (slash && strlen(slash + 1) >= sizeof(proto)) ||
	    strspn(ctl->why[2], "0123456789") != n ||
	    strspn(ctl->why[0], "0123456789abcdefABCDEF.:") != strlen(ctl->why[0]) ||
	    strspn(ctl->why[1], "0123456789abcdefABCDEF.:") != strlen(ctl->why[1]))
		return -EINVAL;
	memcpy(port, ctl->why[2], n);
	port[n] = '\0';
	if (slash)
		snprintf(proto, sizeof(proto), "%s", slash + 1);
	for (char *c = proto; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (strspn(proto, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(proto))
		return -EINVAL;
	snprintf(path, len, "/policy/why?src=%s&dst=%s&port=%s&proto=%s", ctl->why[0], ctl->why[1],
		 port, proto);
	return 0;
}

int cmd_ctl_policy(struct ctl *ctl)
{
	const char *agent = ctl_private_agent(ctl);
	char path[512], *body = NULL;
	const cJSON *error;
	cJSON *json;
	int status;

	if (!agent[0]) {
		ctl_error(ctl, "policy: velod computes policy; --socket \"\" and --agent \"\" "
			       "leave nothing to ask");
		return CTL_EXIT_USAGE;
	}
	if (ctl->why[0] && why_path(ctl, path, sizeof(path))) {
		ctl_error(ctl, "policy why: '%s %s %s' is not SRC_IP DST_IP PORT[/PROTO]",
			  ctl->why[0], ctl->why[1], ctl->why[2]);
		return CTL_EXIT_USAGE;
	}
	if (!ctl->why[0] && ctl->argument && !valid_pod(ctl->argument)) {
		ctl_error(ctl, "policy: '%s' is not NAMESPACE/NAME", ctl->argument);
		return CTL_EXIT_USAGE;
	}
	if (ctl->why[0])
		; /* why_path wrote it */
	else if (ctl->argument)
		snprintf(path, sizeof(path), "/policy?pod=%s", ctl->argument);
	else
		snprintf(path, sizeof(path), "/policy");
	status = ctl_http_get_all(agent, path, &body);
	if (status < 0) {
		ctl_error(ctl, "policy: velod at %s: %s", agent, strerror(-status));
		return CTL_EXIT_FAILED;
	}
	json = cJSON_Parse(body);
	error = field(json, "error");
	if (status != 200 || !cJSON_IsObject(json)) {
		if (cJSON_IsString(error))
			ctl_error(ctl, "policy: velod: %s", error->valuestring);
		else
			ctl_error(ctl, "policy: velod answered %d%s", status,
				  json ? "" : " without JSON");
		cJSON_Delete(json);
		free(body);
		return CTL_EXIT_FAILED;
	}
	free(body);
	if (ctl->json)
		return ctl_print_json(ctl, json) ? CTL_EXIT_FAILED : CTL_EXIT_OK;
	if (ctl->why[0])
		print_why(json);
	else if (ctl->argument)
		print_pod(json);
	else
		print_pods(json);
	cJSON_Delete(json);
	return fflush(stdout) ? CTL_EXIT_FAILED : CTL_EXIT_OK;
}
