// SPDX-License-Identifier: Apache-2.0
/*
 * Namespace and Pod objects, and the policy file (parse.h). A pod's
 * named ports are kept sorted by name: with its namespace and labels they
 * are its identity (ids.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "policy/cidr.h"
#include "policy/json.h"
#include "policy/netpol.h"
#include "policy/parse.h"

/* labels plus key=value, kept sorted (the Namespace's own name label). */
static int labels_add(struct velo_pol_labels *labels, const char *key, const char *value)
{
	struct velo_pol_label *grown = realloc(labels->items, (labels->n + 1) * sizeof(*grown));
	unsigned at = 0;

	if (!grown)
		return -ENOMEM;
	labels->items = grown;
	while (at < labels->n && strcmp(labels->items[at].key, key) < 0)
		at++;
	memmove(&labels->items[at + 1], &labels->items[at], (labels->n - at) * sizeof(*grown));
	labels->items[at].key = strdup(key);
	labels->items[at].value = strdup(value);
	labels->n++;
	return labels->items[at].key && labels->items[at].value ? 0 : -ENOMEM;
}

int velo_pol_namespace_parse(const cJSON *json, struct velo_pol_namespace *out, char *why,
			     size_t why_size)
{
	const cJSON *meta = velo_json_field(json, "metadata");
	int ret;

	memset(out, 0, sizeof(*out));
	if (velo_pol_json_meta(json, NULL, out->name, sizeof(out->name))) {
		snprintf(why, why_size, "a Namespace without a usable metadata.name");
		return -EINVAL;
	}
	ret = velo_pol_json_labels(velo_json_field(meta, "labels"), &out->labels);
	if (!ret && !velo_pol_labels_get(&out->labels, VELO_POL_NS_LABEL))
		ret = labels_add(&out->labels, VELO_POL_NS_LABEL, out->name);
	if (ret == -EINVAL)
		snprintf(why, why_size, "Namespace %s: bad metadata.labels", out->name);
	if (ret)
		velo_pol_namespace_free(out);
	return ret;
}

static int cmp_port(const void *a, const void *b)
{
	return strcmp(((const struct velo_pol_named_port *)a)->name,
		      ((const struct velo_pol_named_port *)b)->name);
}

/* The named ports of one list of containers, appended to the pod's. */
static int container_ports(const cJSON *spec, const char *list, struct velo_pol_pod *out)
{
	const cJSON *containers, *container, *ports, *port;

	if (velo_pol_json_array(spec, list, &containers))
		return -EINVAL;
	cJSON_ArrayForEach (container, containers) {
		if (velo_pol_json_array(container, "ports", &ports))
			return -EINVAL;
		cJSON_ArrayForEach (port, ports) {
			struct velo_pol_named_port one = {}, *grown;
			int number;

			if (velo_json_string(port, "name", one.name, sizeof(one.name)) ||
			    velo_pol_json_protocol(port, "protocol", &one.proto) ||
			    !velo_json_int(velo_json_field(port, "containerPort"), 1, 65535,
					   &number))
				return -EINVAL;
			if (!one.name[0])
				continue; /* only named ports resolve */
			one.port = (uint16_t)number;
			grown = realloc(out->ports, (out->n_ports + 1) * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			out->ports = grown;
			out->ports[out->n_ports++] = one;
		}
	}
	return 0;
}

static int pod_ips(const cJSON *status, struct velo_pol_pod *out)
{
	const cJSON *ips, *item;
	char text[64];

	if (velo_pol_json_array(status, "podIPs", &ips))
		return -EINVAL;
	if (!cJSON_GetArraySize(ips)) {
		if (velo_json_string(status, "podIP", text, sizeof(text)))
			return -EINVAL;
		if (!text[0])
			return 0;
		out->n_ips = 1;
		return velo_pol_cidr_parse(text, true, &out->ips[0]);
	}
	cJSON_ArrayForEach (item, ips) {
		if (out->n_ips == VELO_POL_MAX_POD_IPS ||
		    velo_json_string(item, "ip", text, sizeof(text)) ||
		    velo_pol_cidr_parse(text, true, &out->ips[out->n_ips++]))
			return -EINVAL;
	}
	return 0;
}

int velo_pol_pod_parse(const cJSON *json, struct velo_pol_pod *out, char *why, size_t why_size)
{
	const cJSON *spec = velo_json_field(json, "spec");
	const cJSON *status = velo_json_field(json, "status");
	const cJSON *host_network = velo_json_field(spec, "hostNetwork");
	const char *bad = NULL;
	char phase[32];
	int ret;

	memset(out, 0, sizeof(*out));
	if (velo_pol_json_meta(json, out->ns, out->name, sizeof(out->name))) {
		snprintf(why, why_size, "a Pod without a usable metadata.namespace and name");
		return -EINVAL;
	}
	ret = velo_pol_json_labels(velo_json_field(velo_json_field(json, "metadata"), "labels"),
				   &out->labels);
	if (ret == -EINVAL)
		bad = "metadata.labels";
	else if (!ret && velo_json_string(spec, "nodeName", out->node, sizeof(out->node)))
		bad = "spec.nodeName";
	else if (!ret && host_network && !cJSON_IsNull(host_network) && !cJSON_IsBool(host_network))
		bad = "spec.hostNetwork";
	else if (!ret && velo_json_string(status, "phase", phase, sizeof(phase)))
		bad = "status.phase";
	else if (!ret && pod_ips(status, out))
		bad = "status.podIPs";
	if (!ret && !bad) {
		ret = container_ports(spec, "containers", out);
		if (!ret)
			ret = container_ports(spec, "initContainers", out);
		if (ret == -EINVAL)
			bad = "spec.containers[].ports";
	}
	if (!ret && !bad) {
		out->host_network = cJSON_IsTrue(host_network);
		out->finished = !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
		if (out->n_ports)
			qsort(out->ports, out->n_ports, sizeof(*out->ports), cmp_port);
		for (unsigned i = 1; i < out->n_ports; i++)
			if (!strcmp(out->ports[i - 1].name, out->ports[i].name))
				bad = "spec.containers[].ports (a name twice)";
	}
	if (bad) {
		snprintf(why, why_size, "Pod %s/%s: bad %s", out->ns, out->name, bad);
		ret = -EINVAL;
	}
	if (ret)
		velo_pol_pod_free(out);
	return ret;
}

/* One array of the file into state, by kind. */
static int parse_list(const cJSON *array, unsigned kind, struct velo_pol_objects *state, char *why,
		      size_t why_size)
{
	const cJSON *item;
	int ret = 0;

	cJSON_ArrayForEach (item, array) {
		union {
			struct velo_pol_namespace ns;
			struct velo_pol_pod pod;
			struct velo_pol_netpol netpol;
		} one;

		if (kind == 0) {
			ret = velo_pol_namespace_parse(item, &one.ns, why, why_size);
			if (!ret)
				ret = velo_pol_objects_put_namespace(state, &one.ns);
			velo_pol_namespace_free(&one.ns);
		} else if (kind == 1) {
			ret = velo_pol_pod_parse(item, &one.pod, why, why_size);
			if (!ret)
				ret = velo_pol_objects_put_pod(state, &one.pod);
			velo_pol_pod_free(&one.pod);
		} else {
			ret = velo_pol_netpol_parse(item, &one.netpol, why, why_size);
			if (!ret)
				ret = velo_pol_objects_put_netpol(state, &one.netpol);
			velo_pol_netpol_free(&one.netpol);
		}
		if (ret)
			break;
	}
	return ret;
}

int velo_pol_objects_parse(const char *text, size_t len, struct velo_pol_objects *state, char *why,
			   size_t why_size)
{
	static const char *const lists[] = { "namespaces", "pods", "networkPolicies" };
	cJSON *json = cJSON_ParseWithLength(text, len);
	int ret = 0;

	memset(state, 0, sizeof(*state));
	if (!cJSON_IsObject(json)) {
		snprintf(why, why_size, "policy file: not a JSON object");
		cJSON_Delete(json);
		return -EINVAL;
	}
	for (unsigned i = 0; !ret && i < 3; i++) {
		const cJSON *array = cJSON_GetObjectItemCaseSensitive(json, lists[i]);

		if (array && !cJSON_IsArray(array)) {
			snprintf(why, why_size, "policy file: %s must be an array", lists[i]);
			ret = -EINVAL;
		} else {
			ret = parse_list(array, i, state, why, why_size);
		}
	}
	if (ret == -ENOMEM)
		snprintf(why, why_size, "policy file: out of memory");
	if (ret)
		velo_pol_objects_free(state);
	cJSON_Delete(json);
	return ret;
}
