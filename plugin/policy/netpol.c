// SPDX-License-Identifier: Apache-2.0
/* NetworkPolicy objects into velo's structs (netpol.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "policy/cidr.h"
#include "policy/json.h"
#include "policy/netpol.h"

static int block_parse(const cJSON *json, struct velo_pol_peer *out)
{
	const cJSON *excepts, *item;
	char text[64];

	if (!cJSON_IsObject(json) || velo_json_string(json, "cidr", text, sizeof(text)) ||
	    velo_pol_cidr_parse(text, false, &out->block) ||
	    velo_pol_json_array(json, "except", &excepts))
		return -EINVAL;
	out->has_block = true;
	if (!cJSON_GetArraySize(excepts))
		return 0;
	out->except = calloc((size_t)cJSON_GetArraySize(excepts), sizeof(*out->except));
	if (!out->except)
		return -ENOMEM;
	cJSON_ArrayForEach (item, excepts) {
		struct velo_pol_cidr *except = &out->except[out->n_except++];

		/* The API: each except a strict subset of cidr. */
		if (!cJSON_IsString(item) ||
		    velo_pol_cidr_parse(item->valuestring, false, except) ||
		    !velo_pol_cidr_inside(except, &out->block) ||
		    except->prefix == out->block.prefix)
			return -EINVAL;
	}
	return 0;
}

static int peer_parse(const cJSON *json, struct velo_pol_peer *out)
{
	const cJSON *pods = velo_json_field(json, "podSelector");
	const cJSON *namespaces = velo_json_field(json, "namespaceSelector");
	const cJSON *block = velo_json_field(json, "ipBlock");
	int ret = 0;

	if (pods && cJSON_IsNull(pods))
		pods = NULL;
	if (namespaces && cJSON_IsNull(namespaces))
		namespaces = NULL;
	if (block && cJSON_IsNull(block))
		block = NULL;
	if (!cJSON_IsObject(json) || (!pods && !namespaces && !block) ||
	    (block && (pods || namespaces)))
		return -EINVAL;
	if (block)
		return block_parse(block, out);
	if (pods) {
		out->has_pods = true;
		ret = velo_pol_json_selector(pods, &out->pods);
	}
	if (!ret && namespaces) {
		out->has_namespaces = true;
		ret = velo_pol_json_selector(namespaces, &out->namespaces);
	}
	return ret;
}

static int port_parse(const cJSON *json, struct velo_pol_port *out)
{
	const cJSON *port = velo_json_field(json, "port");
	const cJSON *end = velo_json_field(json, "endPort");
	int number, last;

	if (!cJSON_IsObject(json) || velo_pol_json_protocol(json, "protocol", &out->proto))
		return -EINVAL;
	if (end && cJSON_IsNull(end))
		end = NULL;
	if (!port || cJSON_IsNull(port))
		return end ? -EINVAL : 0; /* every port of the protocol */
	if (cJSON_IsString(port)) {
		size_t len = strlen(port->valuestring);

		/* An IANA_SVC_NAME: at most 15 characters, a letter among them. */
		if (end || !len || len >= sizeof(out->name) ||
		    !strpbrk(port->valuestring, "abcdefghijklmnopqrstuvwxyz"))
			return -EINVAL;
		memcpy(out->name, port->valuestring, len + 1);
		return 0;
	}
	if (!velo_json_int(port, 1, 65535, &number))
		return -EINVAL;
	last = number;
	if (end && !velo_json_int(end, number, 65535, &last))
		return -EINVAL;
	out->port = (uint16_t)number;
	out->end_port = (uint16_t)last;
	return 0;
}

/* The array member name of object, each item by parse into a calloc'd *items (*n counted). */
static int items_parse(const cJSON *object, const char *name, size_t size, void **items,
		       unsigned *n, int (*parse)(const cJSON *json, void *out))
{
	const cJSON *list, *one;
	int ret;

	if (velo_pol_json_array(object, name, &list))
		return -EINVAL;
	if (!cJSON_GetArraySize(list))
		return 0;
	*items = calloc((size_t)cJSON_GetArraySize(list), size);
	if (!*items)
		return -ENOMEM;
	cJSON_ArrayForEach (one, list) {
		ret = parse(one, (char *)*items + (size_t)(*n)++ * size);
		if (ret)
			return ret;
	}
	return 0;
}

static int peer_item(const cJSON *json, void *out)
{
	return peer_parse(json, out);
}

static int port_item(const cJSON *json, void *out)
{
	return port_parse(json, out);
}

/* ingress[] (peers under "from") or egress[] ("to") into *rules. */
static int rules_parse(const cJSON *array, const char *peers_name, struct velo_pol_np_rule **rules,
		       unsigned *n_rules)
{
	const cJSON *item;
	int ret = 0;

	if (!cJSON_GetArraySize(array))
		return 0;
	*rules = calloc((size_t)cJSON_GetArraySize(array), sizeof(**rules));
	if (!*rules)
		return -ENOMEM;
	cJSON_ArrayForEach (item, array) {
		struct velo_pol_np_rule *rule = &(*rules)[(*n_rules)++];

		if (!cJSON_IsObject(item))
			return -EINVAL;
		ret = items_parse(item, peers_name, sizeof(*rule->peers), (void **)&rule->peers,
				  &rule->n_peers, peer_item);
		if (!ret)
			ret = items_parse(item, "ports", sizeof(*rule->ports),
					  (void **)&rule->ports, &rule->n_ports, port_item);
		if (ret)
			return ret;
	}
	return 0;
}

static int types_parse(const cJSON *spec, struct velo_pol_netpol *out)
{
	const cJSON *types, *item;

	if (velo_pol_json_array(spec, "policyTypes", &types))
		return -EINVAL;
	if (!cJSON_GetArraySize(types)) {
		out->ingress = true;
		out->egress = out->n_egress > 0;
		return 0;
	}
	cJSON_ArrayForEach (item, types) {
		if (cJSON_IsString(item) && !strcmp(item->valuestring, "Ingress"))
			out->ingress = true;
		else if (cJSON_IsString(item) && !strcmp(item->valuestring, "Egress"))
			out->egress = true;
		else
			return -EINVAL;
	}
	return 0;
}

int velo_pol_netpol_parse(const cJSON *json, struct velo_pol_netpol *out, char *why,
			  size_t why_size)
{
	const cJSON *spec = velo_json_field(json, "spec");
	const cJSON *subject = velo_json_field(spec, "podSelector"), *rules;
	const char *bad = NULL;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (velo_pol_json_meta(json, out->ns, out->name, sizeof(out->name))) {
		snprintf(why, why_size,
			 "a NetworkPolicy without a usable metadata.namespace and name");
		return -EINVAL;
	}
	if (!cJSON_IsObject(spec)) {
		bad = "spec";
	} else if (subject && !cJSON_IsNull(subject) &&
		   (ret = velo_pol_json_selector(subject, &out->subject))) {
		bad = "spec.podSelector";
	} else if (velo_pol_json_array(spec, "ingress", &rules) ||
		   (ret = rules_parse(rules, "from", &out->ingress_rules, &out->n_ingress))) {
		bad = "spec.ingress";
	} else if (velo_pol_json_array(spec, "egress", &rules) ||
		   (ret = rules_parse(rules, "to", &out->egress_rules, &out->n_egress))) {
		bad = "spec.egress";
	} else if (types_parse(spec, out)) {
		bad = "spec.policyTypes";
	}
	if (ret == -ENOMEM) {
		snprintf(why, why_size, "NetworkPolicy %s/%s: out of memory", out->ns, out->name);
	} else if (bad) {
		snprintf(why, why_size, "NetworkPolicy %s/%s: bad %s", out->ns, out->name, bad);
		ret = -EINVAL;
	}
	if (ret)
		velo_pol_netpol_free(out);
	return ret;
}
