// SPDX-License-Identifier: Apache-2.0
/*
 * What velod's policy state shows (policy_show.h): GET /policy, and the
 * names flows and metrics give pods and policies.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "policy/cidr.h"
#include "policy/describe.h"
#include "k8s/k8s_policy.h"
#include "policy_show.h"
#include "policy_state.h"

struct describe {
	const struct policy_state *state;
	const char *pod;
	cJSON *answer;
};

static int describe_fn(const struct velo_pol_objects *objects, void *ctx)
{
	struct describe *describe = ctx;
	const struct policy_state *state = describe->state;
	struct velo_pol_node node = { .local = state->local, .n_local = state->n_local };
	char ns[VELO_POL_NS_MAX];
	const char *slash;

	if (!describe->pod) {
		describe->answer = velo_pol_describe_node(objects, &node);
		return describe->answer ? 0 : -errno;
	}
	slash = strchr(describe->pod, '/');
	if (!slash || (size_t)(slash - describe->pod) >= sizeof(ns))
		return -EINVAL;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - describe->pod), describe->pod);
	describe->answer = velo_pol_describe_pod(objects, &node, &state->tables, ns, slash + 1);
	return describe->answer ? 0 : -errno;
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
	struct describe describe = { state, pod, NULL };
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
	ret = state->watch ? k8s_policy_with(state->watch, describe_fn, &describe)
			   : describe_fn(&state->file_objects, &describe);
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
	cJSON_AddNumberToObject(describe.answer, "revision", state->revision);
	policy_report_json(&state->report, pod, describe.answer);
	cJSON_AddItemToObject(describe.answer, "serviceCidrs",
			      k8s_servicecidrs_json(state->cidrs, state->config));
	body = cJSON_PrintUnformatted(describe.answer);
	cJSON_Delete(describe.answer);
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

struct isolating {
	const struct policy_state *state;
	uint32_t identity;
	bool ingress;
	char *buf;
	size_t len;
};

static int isolating_fn(const struct velo_pol_objects *objects, void *ctx)
{
	struct isolating *ask = ctx;

	velo_pol_isolating(objects, &ask->state->tables, ask->identity, ask->ingress, ask->buf,
			   ask->len);
	return 0;
}

void policy_isolating(const struct policy *policy, uint32_t identity, bool ingress, char *buf,
		      size_t len)
{
	const struct policy_state *state = policy->state;
	struct isolating ask = { state, identity, ingress, buf, len };

	if (len)
		buf[0] = '\0';
	if (!state || !policy->synced)
		return;
	if (state->watch)
		k8s_policy_with(state->watch, isolating_fn, &ask);
	else
		isolating_fn(&state->file_objects, &ask);
}

struct cnp_name {
	const char *name;
	char *buf;
	size_t len;
};

static int cnp_name_fn(const struct velo_pol_objects *objects, void *ctx)
{
	struct cnp_name *ask = ctx;

	for (unsigned i = 0; i < objects->n_cnps; i++)
		if (!strcmp(objects->cnps[i].name, ask->name)) {
			snprintf(ask->buf, ask->len, "%s:%s",
				 objects->cnps[i].baseline ? "Baseline" : "Admin", ask->name);
			return 0;
		}
	snprintf(ask->buf, ask->len, "%s", ask->name);
	return 0;
}

void policy_cnp_name(const struct policy *policy, uint32_t id, char *buf, size_t len)
{
	const struct policy_state *state = policy->state;
	const char *key = state && id ? velo_pol_policy_name(&state->numbering, id) : NULL;
	struct cnp_name ask = { key ? key + 4 : NULL, buf, len };

	if (len)
		buf[0] = '\0';
	if (!key || strncmp(key, "cnp:", 4))
		return;
	if (state->watch)
		k8s_policy_with(state->watch, cnp_name_fn, &ask);
	else
		cnp_name_fn(&state->file_objects, &ask);
}
