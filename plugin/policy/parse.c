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
#include "policy/cnp.h"
#include "policy/json.h"
#include "policy/netpol.h"
#include "policy/object.h"
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

int velo_pol_node_parse(const cJSON *json, struct velo_pol_node_obj *out, char *why,
			size_t why_size)
{
	const cJSON *meta = velo_json_field(json, "metadata"), *addresses, *item;
	int ret;

	memset(out, 0, sizeof(*out));
	if (velo_pol_json_meta(json, NULL, out->name, sizeof(out->name))) {
		snprintf(why, why_size, "a Node without a usable metadata.name");
		return -EINVAL;
	}
	ret = velo_pol_json_labels(velo_json_field(meta, "labels"), &out->labels);
	if (ret) {
		snprintf(why, why_size, "Node %s: bad metadata.labels", out->name);
		velo_pol_node_free(out);
		return ret;
	}
	/* The API's node IPs; one velod can't read is left out (a nodes peer matches less). */
	if (velo_pol_json_array(velo_json_field(json, "status"), "addresses", &addresses))
		return 0;
	cJSON_ArrayForEach (item, addresses) {
		const cJSON *type = velo_json_field(item, "type");
		const cJSON *addr = velo_json_field(item, "address");

		if (out->n_addrs == VELO_POL_MAX_POD_IPS || !cJSON_IsString(type) ||
		    !cJSON_IsString(addr) ||
		    (strcmp(type->valuestring, "InternalIP") &&
		     strcmp(type->valuestring, "ExternalIP")))
			continue;
		if (!velo_pol_cidr_parse(addr->valuestring, true, &out->addrs[out->n_addrs]))
			out->n_addrs++;
	}
	return 0;
}

static int cmp_port(const void *a, const void *b)
{
	const struct velo_pol_named_port *x = a, *y = b;
	int cmp = strcmp(x->name, y->name);

	return cmp ? cmp : x->proto != y->proto ? x->proto - y->proto : x->port - y->port;
}

/*
 * The named ports of one list of containers, appended to the pod's. A port
 * velod can't read is left out and noted: a rule naming it then allows
 * nothing on this pod (closed), and the pod's other ports still count.
 */
static int container_ports(const cJSON *spec, const char *list, struct velo_pol_pod *out,
			   char *notes)
{
	const cJSON *containers, *container, *ports, *port;
	unsigned c = 0;

	if (velo_pol_json_array(spec, list, &containers)) {
		velo_pol_note(notes, VELO_POL_PROBLEM_MAX, "spec.%s: not a list", list);
		return 0;
	}
	cJSON_ArrayForEach (container, containers) {
		unsigned p = 0;

		if (velo_pol_json_array(container, "ports", &ports))
			velo_pol_note(notes, VELO_POL_PROBLEM_MAX, "spec.%s[%u].ports: not a list",
				      list, c);
		cJSON_ArrayForEach (port, ports) {
			struct velo_pol_named_port one = {}, *grown;
			int number;

			if (velo_json_string(port, "name", one.name, sizeof(one.name)) ||
			    velo_pol_json_protocol(port, "protocol", &one.proto) ||
			    !velo_json_int(velo_json_field(port, "containerPort"), 1, 65535,
					   &number)) {
				velo_pol_note(notes, VELO_POL_PROBLEM_MAX,
					      "spec.%s[%u].ports[%u]: bad name, protocol or "
					      "containerPort (left out)",
					      list, c, p++);
				continue;
			}
			p++;
			if (!one.name[0])
				continue; /* only named ports resolve */
			one.port = (uint16_t)number;
			grown = realloc(out->ports, (out->n_ports + 1) * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			out->ports = grown;
			out->ports[out->n_ports++] = one;
		}
		c++;
	}
	return 0;
}

/* status.podIPs (else podIP): an address velod can't read is left out and noted. */
static void pod_ips(const cJSON *status, struct velo_pol_pod *out, char *notes)
{
	const cJSON *ips, *item;
	char text[64];
	unsigned i = 0;

	if (velo_pol_json_array(status, "podIPs", &ips)) {
		velo_pol_note(notes, VELO_POL_PROBLEM_MAX, "status.podIPs: not a list");
		ips = NULL;
	}
	if (!cJSON_GetArraySize(ips)) {
		if (velo_json_string(status, "podIP", text, sizeof(text)) ||
		    (text[0] && velo_pol_cidr_parse(text, true, &out->ips[0])))
			velo_pol_note(notes, VELO_POL_PROBLEM_MAX, "status.podIP: not an address");
		else if (text[0])
			out->n_ips = 1;
		return;
	}
	cJSON_ArrayForEach (item, ips) {
		if (out->n_ips == VELO_POL_MAX_POD_IPS) {
			velo_pol_note(notes, VELO_POL_PROBLEM_MAX,
				      "status.podIPs: more than %u (the rest left out)",
				      VELO_POL_MAX_POD_IPS);
			return;
		}
		if (velo_json_string(item, "ip", text, sizeof(text)) ||
		    velo_pol_cidr_parse(text, true, &out->ips[out->n_ips]))
			velo_pol_note(notes, VELO_POL_PROBLEM_MAX,
				      "status.podIPs[%u]: not an address (left out)", i);
		else
			out->n_ips++;
		i++;
	}
}

/* Exact repeats of a (name, protocol, number) go: they say nothing more. */
static void ports_sort(struct velo_pol_pod *out)
{
	unsigned n = 0;

	if (!out->n_ports)
		return;
	qsort(out->ports, out->n_ports, sizeof(*out->ports), cmp_port);
	for (unsigned i = 0; i < out->n_ports; i++)
		if (!n || cmp_port(&out->ports[n - 1], &out->ports[i]))
			out->ports[n++] = out->ports[i];
	out->n_ports = n;
}

/*
 * Every field but metadata's namespace and name degrades alone: what velod
 * can't read is left out (labels: none; nodeName: unknown; hostNetwork,
 * phase: the defaults) and noted in out->problem, never the whole pod, which
 * would leave a local pod unplaced (its traffic dropped) and a remote one
 * unknown.
 */
int velo_pol_pod_parse(const cJSON *json, struct velo_pol_pod *out, char *why, size_t why_size)
{
	const cJSON *spec = velo_json_field(json, "spec");
	const cJSON *status = velo_json_field(json, "status");
	const cJSON *host_network = velo_json_field(spec, "hostNetwork");
	char phase[32], notes[VELO_POL_PROBLEM_MAX] = "";
	int ret;

	memset(out, 0, sizeof(*out));
	if (velo_pol_json_meta(json, out->ns, out->name, sizeof(out->name))) {
		snprintf(why, why_size, "a Pod without a usable metadata.namespace and name");
		return -EINVAL;
	}
	velo_pol_json_uid(json, out->uid);
	ret = velo_pol_json_labels(velo_json_field(velo_json_field(json, "metadata"), "labels"),
				   &out->labels);
	if (ret == -EINVAL)
		velo_pol_note(notes, sizeof(notes), "metadata.labels: unreadable (taken as none)");
	if (velo_json_string(spec, "nodeName", out->node, sizeof(out->node))) {
		out->node[0] = '\0';
		velo_pol_note(notes, sizeof(notes), "spec.nodeName: not a name");
	}
	if (host_network && !cJSON_IsNull(host_network) && !cJSON_IsBool(host_network))
		velo_pol_note(notes, sizeof(notes),
			      "spec.hostNetwork: not a boolean (taken as false)");
	if (velo_json_string(status, "phase", phase, sizeof(phase))) {
		phase[0] = '\0';
		velo_pol_note(notes, sizeof(notes), "status.phase: not a string");
	}
	pod_ips(status, out, notes);
	if (ret != -ENOMEM)
		ret = container_ports(spec, "containers", out, notes);
	if (!ret)
		ret = container_ports(spec, "initContainers", out, notes);
	if (!ret && notes[0] && !(out->problem = strdup(notes)))
		ret = -ENOMEM;
	if (ret) {
		snprintf(why, why_size, "Pod %s/%s: out of memory", out->ns, out->name);
		velo_pol_pod_free(out);
		return ret;
	}
	out->host_network = cJSON_IsTrue(host_network);
	out->finished = !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
	ports_sort(out);
	if (out->problem)
		snprintf(why, why_size, "Pod %s/%s: %s", out->ns, out->name, out->problem);
	return 0;
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
			struct velo_pol_cnp cnp;
			struct velo_pol_node_obj node;
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
		} else if (kind == 2) {
			ret = velo_pol_netpol_parse(item, &one.netpol, why, why_size);
			if (!ret)
				ret = velo_pol_objects_put_netpol(state, &one.netpol);
			velo_pol_netpol_free(&one.netpol);
		} else if (kind == 3) {
			ret = velo_pol_cnp_parse(item, &one.cnp, why, why_size);
			if (!ret)
				ret = velo_pol_objects_put_cnp(state, &one.cnp);
			velo_pol_cnp_free(&one.cnp);
		} else {
			ret = velo_pol_node_parse(item, &one.node, why, why_size);
			if (!ret)
				ret = velo_pol_objects_put_node(state, &one.node);
			velo_pol_node_free(&one.node);
		}
		if (ret)
			break;
	}
	return ret;
}

int velo_pol_objects_parse(const char *text, size_t len, struct velo_pol_objects *state, char *why,
			   size_t why_size)
{
	static const char *const lists[] = { "namespaces", "pods", "networkPolicies",
					     "clusterNetworkPolicies", "nodes" };
	cJSON *json = cJSON_ParseWithLength(text, len);
	int ret = 0;

	memset(state, 0, sizeof(*state));
	if (!cJSON_IsObject(json)) {
		snprintf(why, why_size, "policy file: not a JSON object");
		cJSON_Delete(json);
		return -EINVAL;
	}
	for (unsigned i = 0; !ret && i < sizeof(lists) / sizeof(lists[0]); i++) {
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
