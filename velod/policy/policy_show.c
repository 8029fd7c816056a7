// SPDX-License-Identifier: Apache-2.0
/*
 * What velod's policy state shows (policy_show.h): GET /policy, and the
 * names flows and metrics give pods and policies.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "datapath/flow_names.h"
#include "policy/cidr.h"
#include "policy/describe.h"
#include "policy/eval.h"
#include "k8s/k8s_servicecidrs.h"
#include "policy.h"
#include "policy_show.h"
#include "policy_state.h"

/* The node's policy (pod NULL) or pod's ("ns/name") as JSON into *answer: 0, -EINVAL, -ENOENT,
 * -ENOMEM. */
static int describe(const struct policy_state *state, const struct velo_pol_objects *objects,
		    const char *pod, cJSON **answer)
{
	struct velo_pol_node node = { .local = state->local, .n_local = state->n_local };
	char ns[VELO_POL_NS_MAX];
	const char *slash;

	if (!pod) {
		*answer = velo_pol_describe_node(objects, &node);
		return *answer ? 0 : -errno;
	}
	slash = strchr(pod, '/');
	if (!slash || (size_t)(slash - pod) >= sizeof(ns))
		return -EINVAL;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - pod), pod);
	*answer = velo_pol_describe_pod(objects, &node, &state->tables, ns, slash + 1);
	return *answer ? 0 : -errno;
}

static char *error_body(const char *text)
{
	cJSON *json = cJSON_CreateObject();
	char *body;

	cJSON_AddStringToObject(json, "error", text);
	body = cJSON_PrintUnformatted(json);
	cJSON_Delete(json);
	return body;
}

char *policy_http(const struct policy *policy, const char *pod, unsigned *status)
{
	const struct policy_state *state = policy->state;
	const struct velo_pol_objects *objects;
	cJSON *answer = NULL;
	char *body, text[512];
	int ret;

	if (!state) {
		*status = 404;
		return error_body("velod has no policy source (policySource \"none\")");
	}
	if (!policy->synced) {
		*status = 503;
		return error_body("velod has not synced its policy source yet");
	}
	objects = policy_objects_hold(state);
	ret = objects ? describe(state, objects, pod, &answer) : -EAGAIN;
	if (objects)
		policy_objects_release(state);
	if (ret == -ENOENT || ret == -EINVAL) {
		*status = 404;
		snprintf(text, sizeof(text), "no pod %s in velod's policy state", pod ? pod : "");
		return error_body(text);
	}
	if (ret) {
		*status = 500;
		snprintf(text, sizeof(text), "describing the policy: %s", strerror(-ret));
		return error_body(text);
	}
	cJSON_AddNumberToObject(answer, "revision", state->revision);
	policy_report_json(&state->report, pod, answer);
	cJSON_AddItemToObject(answer, "serviceCidrs",
			      k8s_servicecidrs_json(state->cidrs, state->config));
	body = cJSON_PrintUnformatted(answer);
	cJSON_Delete(answer);
	*status = body ? 200 : 500;
	return body;
}

const struct policy_report *policy_problems(const struct policy *policy)
{
	return policy->state ? &policy->state->report : NULL;
}

const char *policy_pod_of(const struct policy *policy, const uint8_t addr[16], char *buf,
			  size_t len)
{
	const struct policy_state *state = policy->state;

	for (unsigned i = 0; state && i < state->n_local; i++) {
		for (unsigned a = 0; a < state->local[i].n_ips; a++) {
			struct velo_pol_ip_key key;

			velo_pol_cidr_key(&state->local[i].ips[a], &key);
			if (!memcmp(key.addr, addr, 16)) {
				snprintf(buf, len, "%s/%s", state->local[i].ns,
					 state->local[i].name);
				return buf;
			}
		}
	}
	return NULL;
}

void policy_isolating(const struct policy *policy, uint32_t identity, bool ingress, char *buf,
		      size_t len)
{
	const struct policy_state *state = policy->state;
	const struct velo_pol_objects *objects;

	if (len)
		buf[0] = '\0';
	if (!state || !policy->synced)
		return;
	objects = policy_objects_hold(state);
	if (!objects)
		return;
	velo_pol_isolating(objects, &state->tables, identity, ingress, buf, len);
	policy_objects_release(state);
}

/* "Baseline:name" or "Admin:name" for the ClusterNetworkPolicy name in objects, else name. */
static void cnp_name(const struct velo_pol_objects *objects, const char *name, char *buf,
		     size_t len)
{
	for (unsigned i = 0; i < objects->n_cnps; i++)
		if (!strcmp(objects->cnps[i].name, name)) {
			snprintf(buf, len, "%s:%s",
				 objects->cnps[i].baseline ? "Baseline" : "Admin", name);
			return;
		}
	snprintf(buf, len, "%s", name);
}

void policy_cnp_name(const struct policy *policy, uint32_t id, char *buf, size_t len)
{
	const struct policy_state *state = policy->state;
	const char *key = state && id ? velo_pol_policy_name(&state->numbering, id) : NULL;
	const struct velo_pol_objects *objects;

	if (len)
		buf[0] = '\0';
	if (!key || strncmp(key, "cnp:", 4))
		return;
	objects = policy_objects_hold(state);
	if (!objects)
		return;
	cnp_name(objects, key + 4, buf, len);
	policy_objects_release(state);
}

static const char *decider_name(enum velo_pol_decider by)
{
	static const char *const names[] = {
		[VELO_POL_BY_NONE] = "no policy (not judged)",
		[VELO_POL_BY_NODE] = "this node",
		[VELO_POL_BY_ADMIN] = "Admin tier",
		[VELO_POL_BY_NETPOL] = "NetworkPolicy",
		[VELO_POL_BY_BASELINE] = "Baseline tier",
		[VELO_POL_BY_DEFAULT] = "default (no rule matched)",
		[VELO_POL_BY_SERVICE] = "a Service IP (judged at the backend)",
	};

	return by < sizeof(names) / sizeof(names[0]) ? names[by] : "?";
}

/* One side's decision as JSON; NULL when out of memory. */
static cJSON *side_json(const struct policy *policy, const struct velo_pol_side_why *why,
			const uint8_t addr[16])
{
	static const char *const actions[] = { "", "Accept", "Deny", "Pass" };
	const struct policy_state *state = policy->state;
	cJSON *side = cJSON_CreateObject();
	char name[VELO_POL_NS_MAX + VELO_POL_NAME_MAX + 16] = "";
	const char *key;

	if (!side)
		return NULL;
	policy_pod_of(policy, addr, name, sizeof(name));
	cJSON_AddStringToObject(side, "pod", name);
	cJSON_AddBoolToObject(side, "allowed", why->allowed);
	cJSON_AddStringToObject(side, "decidedBy", decider_name(why->by));
	name[0] = '\0';
	if (why->by == VELO_POL_BY_ADMIN || why->by == VELO_POL_BY_BASELINE) {
		policy_cnp_name(policy, why->policy, name, sizeof(name));
		cJSON_AddNumberToObject(side, "rule", why->rule);
		cJSON_AddStringToObject(side, "action", actions[why->action & 3]);
	} else if (why->policy && (key = velo_pol_policy_name(&state->numbering, why->policy))) {
		snprintf(name, sizeof(name), "%s", key);
	}
	cJSON_AddStringToObject(side, "policy", name);
	return side;
}

char *policy_why_http(const struct policy *policy, const char *src, const char *dst,
		      const char *proto, const char *port, unsigned *status)
{
	const struct policy_state *state = policy->state;
	struct velo_pol_cidr from, to;
	struct velo_pol_ip_key key;
	struct velo_pol_why why;
	int number = 0, protocol = proto ? velo_flow_proto_parse(proto) : 6;
	cJSON *answer;
	char *body;
	int verdict;

	*status = 400;
	if (!state || !policy->synced) {
		*status = state ? 503 : 404;
		return error_body(state ? "velod has not synced its policy source yet"
					: "velod has no policy source (policySource \"none\")");
	}
	if (!src || !dst || velo_pol_cidr_parse(src, true, &from) ||
	    velo_pol_cidr_parse(dst, true, &to) || protocol <= 0 || !port ||
	    sscanf(port, "%d", &number) != 1 || number < 0 || number > 65535)
		return error_body("why needs src and dst addresses, a port (0-65535) and a "
				  "protocol (tcp, udp, sctp, icmp, ...)");
	verdict =
		velo_pol_why(&state->tables, &from, &to, (uint8_t)protocol, (uint16_t)number, &why);
	answer = cJSON_CreateObject();
	cJSON_AddStringToObject(answer, "verdict", verdict ? "dropped" : "allowed");
	velo_pol_cidr_key(&from, &key);
	cJSON_AddItemToObject(answer, "egress", side_json(policy, &why.egress, key.addr));
	if (verdict != VELO_POL_DROP_EGRESS) {
		velo_pol_cidr_key(&to, &key);
		cJSON_AddItemToObject(answer, "ingress", side_json(policy, &why.ingress, key.addr));
	}
	cJSON_AddNumberToObject(answer, "revision", state->revision);
	body = cJSON_PrintUnformatted(answer);
	cJSON_Delete(answer);
	*status = body ? 200 : 500;
	return body;
}
