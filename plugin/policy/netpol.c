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
#include "policy/object.h"

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

/* A rule's peers and ports freed, the rule zeroed (one velod could not read). */
static void rule_clear(struct velo_pol_np_rule *rule)
{
	for (unsigned p = 0; p < rule->n_peers; p++) {
		velo_pol_selector_free(&rule->peers[p].pods);
		velo_pol_selector_free(&rule->peers[p].namespaces);
		free(rule->peers[p].except);
	}
	free(rule->peers);
	free(rule->ports);
	memset(rule, 0, sizeof(*rule));
}

/*
 * ingress[] (peers under "from") or egress[] ("to") into *rules. A rule velod
 * can't read is left out whole (never only the peer or port it can't read:
 * an emptied list would mean every peer or port) and noted: the pods stay
 * isolated with the rules that were read, so it allows less, never more.
 */
static int rules_parse(const cJSON *array, const char *field, const char *peers_name,
		       struct velo_pol_np_rule **rules, unsigned *n_rules, char *notes)
{
	const cJSON *item;
	unsigned i = 0;
	int ret = 0;

	if (!cJSON_GetArraySize(array))
		return 0;
	*rules = calloc((size_t)cJSON_GetArraySize(array), sizeof(**rules));
	if (!*rules)
		return -ENOMEM;
	cJSON_ArrayForEach (item, array) {
		struct velo_pol_np_rule *rule = &(*rules)[*n_rules];

		ret = cJSON_IsObject(item) ? 0 : -EINVAL;
		if (!ret)
			ret = items_parse(item, peers_name, sizeof(*rule->peers),
					  (void **)&rule->peers, &rule->n_peers, peer_item);
		if (!ret)
			ret = items_parse(item, "ports", sizeof(*rule->ports),
					  (void **)&rule->ports, &rule->n_ports, port_item);
		if (ret == -ENOMEM)
			return ret;
		if (ret) {
			rule_clear(rule);
			velo_pol_note(notes, VELO_POL_PROBLEM_MAX,
				      "spec.%s[%u]: unreadable %s or ports (rule left out)", field,
				      i, peers_name);
		} else {
			(*n_rules)++;
		}
		i++;
	}
	return 0;
}

/* 1 when policyTypes can't be read: then both directions count (closed). */
static int types_parse(const cJSON *spec, bool has_egress, struct velo_pol_netpol *out)
{
	const cJSON *types, *item;

	if (velo_pol_json_array(spec, "policyTypes", &types))
		return 1;
	if (!cJSON_GetArraySize(types)) {
		out->ingress = true;
		out->egress = has_egress;
		return 0;
	}
	cJSON_ArrayForEach (item, types) {
		if (cJSON_IsString(item) && !strcmp(item->valuestring, "Ingress"))
			out->ingress = true;
		else if (cJSON_IsString(item) && !strcmp(item->valuestring, "Egress"))
			out->egress = true;
		else
			return 1;
	}
	return 0;
}

/* One direction's rules; a list that isn't one counts as present (egress's default). */
static int direction_parse(const cJSON *spec, const char *field, const char *peers_name,
			   struct velo_pol_np_rule **rules, unsigned *n, bool *present, char *notes)
{
	const cJSON *array;

	if (velo_pol_json_array(spec, field, &array)) {
		velo_pol_note(notes, VELO_POL_PROBLEM_MAX, "spec.%s: not a list (no rule read)",
			      field);
		*present = true;
		return 0;
	}
	*present = cJSON_GetArraySize(array) > 0;
	return rules_parse(array, field, peers_name, rules, n, notes);
}

/* Rules dropped: what they would allow is unknown once the selector or the types are. */
static void rules_drop(struct velo_pol_netpol *out)
{
	for (unsigned r = 0; r < out->n_ingress; r++)
		rule_clear(&out->ingress_rules[r]);
	for (unsigned r = 0; r < out->n_egress; r++)
		rule_clear(&out->egress_rules[r]);
	out->n_ingress = out->n_egress = 0;
}

/*
 * Fails closed, as far as the policy can be read: rules as rules_parse; a
 * podSelector velod can't read selects every pod of the namespace (the pods
 * it meant are among them) with no rule at all, in the directions of its
 * policyTypes: giving those pods this policy's rules could open what another
 * policy isolates them for, giving them nothing only closes; policyTypes it
 * can't read isolate both directions, again with no rule (a rule of a
 * direction the policy doesn't name would allow what it shouldn't).
 */
int velo_pol_netpol_parse(const cJSON *json, struct velo_pol_netpol *out, char *why,
			  size_t why_size)
{
	const cJSON *spec = velo_json_field(json, "spec");
	const cJSON *subject = velo_json_field(spec, "podSelector");
	char notes[VELO_POL_PROBLEM_MAX] = "";
	bool has_ingress = false, has_egress = false, closed = false;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (velo_pol_json_meta(json, out->ns, out->name, sizeof(out->name))) {
		snprintf(why, why_size,
			 "a NetworkPolicy without a usable metadata.namespace and name");
		return -EINVAL;
	}
	velo_pol_json_uid(json, out->uid);
	out->audit = velo_pol_json_annotated(json, VELO_POL_AUDIT_KEY);
	if (!cJSON_IsObject(spec)) {
		velo_pol_note(notes, sizeof(notes), "spec: not an object");
		out->ingress = out->egress = closed = true;
		goto done;
	}
	if (subject && !cJSON_IsNull(subject) &&
	    (ret = velo_pol_json_selector(subject, &out->subject))) {
		if (ret == -ENOMEM)
			goto done;
		velo_pol_note(notes, sizeof(notes), "spec.podSelector: unreadable");
		closed = true;
		ret = 0;
	}
	ret = direction_parse(spec, "ingress", "from", &out->ingress_rules, &out->n_ingress,
			      &has_ingress, notes);
	if (!ret)
		ret = direction_parse(spec, "egress", "to", &out->egress_rules, &out->n_egress,
				      &has_egress, notes);
	if (!ret && types_parse(spec, has_egress, out)) {
		velo_pol_note(notes, sizeof(notes), "spec.policyTypes: unreadable");
		out->ingress = out->egress = closed = true;
	}
done:
	if (!ret && closed) {
		rules_drop(out);
		velo_pol_note(notes, sizeof(notes),
			      "every pod of namespace %s it may select isolated for %s%s%s, "
			      "nothing allowed",
			      out->ns, out->ingress ? "ingress" : "",
			      out->ingress && out->egress ? " and " : "",
			      out->egress ? "egress" : "");
	}
	if (!ret && notes[0] && !(out->problem = strdup(notes)))
		ret = -ENOMEM;
	if (ret) {
		snprintf(why, why_size, "NetworkPolicy %s/%s: out of memory", out->ns, out->name);
		velo_pol_netpol_free(out);
		return ret;
	}
	if (out->problem)
		snprintf(why, why_size, "NetworkPolicy %s/%s: %s", out->ns, out->name,
			 out->problem);
	return 0;
}
