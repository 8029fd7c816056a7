// SPDX-License-Identifier: Apache-2.0
/*
 * velod's GET /policy answers (describe.h), from the objects rather than
 * the maps' entries: a rule reads as the policy wrote it ("pods app=web in
 * namespaces ns=y", "TCP/5432"), named ports with what they resolve to.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cidr.h"
#include "policy/describe.h"
#include "policy/rules.h"
#include "policy/tiers.h"

static const char *proto_name(uint8_t proto)
{
	return proto == IPPROTO_UDP ? "UDP" : proto == IPPROTO_SCTP ? "SCTP" : "TCP";
}

/* "app=web,tier in (a,b),!canary"; "all" for the empty selector. */
static void selector_text(FILE *text, const struct velo_pol_selector *selector)
{
	static const char *const ops[] = { " in ", " notin ", "", "!" };
	bool first = true;

	for (unsigned i = 0; i < selector->match.n; i++, first = false)
		fprintf(text, "%s%s=%s", first ? "" : ",", selector->match.items[i].key,
			selector->match.items[i].value);
	for (unsigned i = 0; i < selector->n_exprs; i++, first = false) {
		const struct velo_pol_expr *expr = &selector->exprs[i];

		fprintf(text, "%s%s%s", first ? "" : ",",
			expr->op == VELO_POL_OP_DOES_NOT_EXIST ? "!" : "", expr->key);
		if (expr->op > VELO_POL_OP_NOT_IN)
			continue;
		fprintf(text, "%s(", ops[expr->op]);
		for (unsigned v = 0; v < expr->n_values; v++)
			fprintf(text, "%s%s", v ? "," : "", expr->values[v]);
		fprintf(text, ")");
	}
	if (first)
		fprintf(text, "all");
}

static cJSON *peer_text(const struct velo_pol_peer *peer, const char *policy_ns)
{
	char *out = NULL, cidr[64];
	size_t len = 0;
	FILE *text = open_memstream(&out, &len);
	cJSON *item;

	if (!text)
		return NULL;
	if (peer->has_block) {
		fprintf(text, "%s", velo_pol_cidr_text(&peer->block, cidr, sizeof(cidr)));
		for (unsigned e = 0; e < peer->n_except; e++)
			fprintf(text, "%s%s", e ? "," : " except ",
				velo_pol_cidr_text(&peer->except[e], cidr, sizeof(cidr)));
	} else {
		if (peer->has_pods) {
			fprintf(text, "pods ");
			selector_text(text, &peer->pods);
			fprintf(text, " in ");
		}
		if (peer->has_namespaces) {
			fprintf(text, "namespaces ");
			selector_text(text, &peer->namespaces);
		} else {
			fprintf(text, "namespace %s", policy_ns);
		}
	}
	if (fclose(text)) {
		free(out);
		return NULL;
	}
	item = cJSON_CreateString(out);
	free(out);
	return item;
}

/* "TCP/80", "TCP/80-81", "UDP" (every port), "TCP/web=8080" (the subject's numbers). */
static cJSON *port_text(const struct velo_pol_port *port, const struct velo_pol_pod *subject,
			bool ingress)
{
	char text[160];
	size_t len;

	if (port->name[0] && !ingress) {
		snprintf(text, sizeof(text), "%s/%s (each peer's)", proto_name(port->proto),
			 port->name);
	} else if (port->name[0]) {
		len = (size_t)snprintf(text, sizeof(text), "%s/%s", proto_name(port->proto),
				       port->name);
		/* A name repeated across containers: each of its numbers. */
		for (unsigned i = 0, n = 0; i < subject->n_ports && len < sizeof(text); i++)
			if (!strcmp(subject->ports[i].name, port->name) &&
			    subject->ports[i].proto == port->proto)
				len += (size_t)snprintf(text + len, sizeof(text) - len, "%c%u",
							n++ ? ',' : '=', subject->ports[i].port);
		if (!strchr(text, '=') && len < sizeof(text))
			snprintf(text + len, sizeof(text) - len, " (not this pod's: nothing)");
	} else if (!port->port) {
		snprintf(text, sizeof(text), "%s", proto_name(port->proto));
	} else if (port->end_port != port->port) {
		snprintf(text, sizeof(text), "%s/%u-%u", proto_name(port->proto), port->port,
			 port->end_port);
	} else {
		snprintf(text, sizeof(text), "%s/%u", proto_name(port->proto), port->port);
	}
	return cJSON_CreateString(text);
}

static bool add_rules(cJSON *list, const struct velo_pol_netpol *netpol,
		      const struct velo_pol_pod *pod, bool ingress)
{
	const struct velo_pol_np_rule *rules =
		ingress ? netpol->ingress_rules : netpol->egress_rules;
	unsigned n = ingress ? netpol->n_ingress : netpol->n_egress;
	char policy[VELO_POL_NS_MAX + VELO_POL_NAME_MAX + 1];

	snprintf(policy, sizeof(policy), "%s/%s", netpol->ns, netpol->name);
	for (unsigned r = 0; r < n; r++) {
		cJSON *rule = cJSON_CreateObject();
		cJSON *peers = cJSON_AddArrayToObject(rule, ingress ? "from" : "to");
		cJSON *ports = cJSON_AddArrayToObject(rule, "ports");

		if (!cJSON_AddItemToArray(list, rule) || !peers || !ports ||
		    !cJSON_AddStringToObject(rule, "policy", policy))
			return false;
		for (unsigned p = 0; p < rules[r].n_peers; p++)
			if (!cJSON_AddItemToArray(peers, peer_text(&rules[r].peers[p], netpol->ns)))
				return false;
		for (unsigned p = 0; p < rules[r].n_ports; p++)
			if (!cJSON_AddItemToArray(ports,
						  port_text(&rules[r].ports[p], pod, ingress)))
				return false;
	}
	return true;
}

/* isolation and policies of pod into out; with rules, its ingress and egress too. */
static bool add_policies(cJSON *out, const struct velo_pol_objects *objects,
			 const struct velo_pol_pod *pod, bool rules)
{
	cJSON *isolation = cJSON_AddObjectToObject(out, "isolation");
	cJSON *policies = cJSON_AddArrayToObject(out, "policies");
	cJSON *ingress = rules ? cJSON_AddArrayToObject(out, "ingress") : NULL;
	cJSON *egress = rules ? cJSON_AddArrayToObject(out, "egress") : NULL;
	bool isolated_in = false, isolated_out = false;

	if (!isolation || !policies || (rules && (!ingress || !egress)))
		return false;
	for (unsigned p = 0; !pod->host_network && p < objects->n_netpols; p++) {
		const struct velo_pol_netpol *netpol = &objects->netpols[p];
		cJSON *policy, *types;

		if (!velo_pol_netpol_selects(netpol, pod))
			continue;
		policy = cJSON_CreateObject();
		if (!cJSON_AddItemToArray(policies, policy) ||
		    !cJSON_AddStringToObject(policy, "namespace", netpol->ns) ||
		    !cJSON_AddStringToObject(policy, "name", netpol->name) ||
		    !(types = cJSON_AddArrayToObject(policy, "policyTypes")))
			return false;
		if (netpol->ingress)
			cJSON_AddItemToArray(types, cJSON_CreateString("Ingress"));
		if (netpol->egress)
			cJSON_AddItemToArray(types, cJSON_CreateString("Egress"));
		isolated_in |= netpol->ingress;
		isolated_out |= netpol->egress;
		if (rules && ((netpol->ingress && !add_rules(ingress, netpol, pod, true)) ||
			      (netpol->egress && !add_rules(egress, netpol, pod, false))))
			return false;
	}
	return cJSON_AddBoolToObject(isolation, "ingress", isolated_in) &&
	       cJSON_AddBoolToObject(isolation, "egress", isolated_out);
}

/* The ClusterNetworkPolicies selecting pod, in evaluation order: {name, tier, priority, ingress, egress}. */
static bool add_tiers(cJSON *out, const struct velo_pol_objects *objects,
		      const struct velo_pol_pod *pod)
{
	const struct velo_pol_namespace *ns = velo_pol_objects_namespace(objects, pod->ns);
	struct velo_pol_label own = { (char *)VELO_POL_NS_LABEL, (char *)pod->ns };
	struct velo_pol_labels spare = { 1, &own };
	cJSON *list = cJSON_AddArrayToObject(out, "clusterNetworkPolicies");
	unsigned *order;
	bool ok = list != NULL;

	if (!ok || velo_pol_cnp_order(objects, &order))
		return false;
	for (unsigned k = 0; ok && !pod->host_network && k < objects->n_cnps; k++) {
		const struct velo_pol_cnp *cnp = &objects->cnps[order[k]];
		cJSON *item;

		if (!velo_pol_cnp_selects_pod(cnp, pod, ns ? &ns->labels : &spare))
			continue;
		item = cJSON_CreateObject();
		ok = cJSON_AddItemToArray(list, item) &&
		     cJSON_AddStringToObject(item, "name", cnp->name) &&
		     cJSON_AddStringToObject(item, "tier", cnp->baseline ? "Baseline" : "Admin") &&
		     cJSON_AddNumberToObject(item, "priority", cnp->priority) &&
		     cJSON_AddNumberToObject(item, "ingress", cnp->n_ingress) &&
		     cJSON_AddNumberToObject(item, "egress", cnp->n_egress) &&
		     (!cnp->problem || cJSON_AddStringToObject(item, "problem", cnp->problem));
	}
	free(order);
	return ok;
}

static const struct velo_pol_local_pod *local_pod(const struct velo_pol_node *node, const char *ns,
						  const char *name)
{
	for (unsigned i = 0; i < node->n_local; i++)
		if (!strcmp(node->local[i].ns, ns) && !strcmp(node->local[i].name, name))
			return &node->local[i];
	return NULL;
}

cJSON *velo_pol_describe_pod(const struct velo_pol_objects *objects,
			     const struct velo_pol_node *node, const struct velo_pol_tables *tables,
			     const char *ns, const char *name)
{
	const struct velo_pol_pod *pod = velo_pol_objects_pod(objects, ns, name);
	const struct velo_pol_local_pod *local = local_pod(node, ns, name);
	const struct velo_pol_placed *placed = velo_pol_tables_placed(tables, ns, name);
	const struct velo_pol_cidr *ips = local ? local->ips : pod ? pod->ips : NULL;
	unsigned n_ips = local ? local->n_ips : pod ? pod->n_ips : 0;
	cJSON *out, *addresses;
	char text[VELO_POL_NS_MAX + VELO_POL_NAME_MAX + 1];

	if (!pod) {
		errno = ENOENT;
		return NULL;
	}
	out = cJSON_CreateObject();
	snprintf(text, sizeof(text), "%s/%s", ns, name);
	if (!cJSON_AddStringToObject(out, "pod", text) ||
	    !(addresses = cJSON_AddArrayToObject(out, "addresses")))
		goto nomem;
	for (unsigned i = 0; i < n_ips; i++)
		if (!cJSON_AddItemToArray(addresses, cJSON_CreateString(velo_pol_cidr_text(
							     &ips[i], text, sizeof(text)))))
			goto nomem;
	if (placed && placed->id && !cJSON_AddNumberToObject(out, "identity", placed->id))
		goto nomem;
	if (add_policies(out, objects, pod, true) && add_tiers(out, objects, pod))
		return out;
nomem:
	cJSON_Delete(out);
	errno = ENOMEM;
	return NULL;
}

cJSON *velo_pol_describe_node(const struct velo_pol_objects *objects,
			      const struct velo_pol_node *node)
{
	cJSON *out = cJSON_CreateObject(), *pods = cJSON_AddArrayToObject(out, "pods");

	for (unsigned i = 0; pods && i < node->n_local; i++) {
		const struct velo_pol_pod *pod =
			velo_pol_objects_pod(objects, node->local[i].ns, node->local[i].name);
		cJSON *item = cJSON_CreateObject();
		char text[VELO_POL_NS_MAX + VELO_POL_NAME_MAX + 1];

		snprintf(text, sizeof(text), "%s/%s", node->local[i].ns, node->local[i].name);
		if (!cJSON_AddItemToArray(pods, item) ||
		    !cJSON_AddStringToObject(item, "pod", text))
			pods = NULL;
		else if (pod && !add_policies(item, objects, pod, false))
			pods = NULL;
	}
	if (!pods) {
		cJSON_Delete(out);
		errno = ENOMEM;
		return NULL;
	}
	return out;
}

unsigned velo_pol_isolating(const struct velo_pol_objects *objects,
			    const struct velo_pol_tables *tables, __u32 identity, bool ingress,
			    char *buf, size_t len)
{
	const struct velo_pol_pod *pod = NULL;
	unsigned found = 0;
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	/* Pods of one identity share namespace and labels: any of them is selected alike. */
	for (unsigned i = 0; !pod && identity >= VELO_ID_POD_FIRST && i < tables->n_placed; i++)
		if (tables->placed[i].id == identity)
			pod = velo_pol_objects_pod(objects, tables->placed[i].ns,
						   tables->placed[i].name);
	for (unsigned p = 0; pod && !pod->host_network && p < objects->n_netpols; p++) {
		const struct velo_pol_netpol *netpol = &objects->netpols[p];
		int n;

		if (!(ingress ? netpol->ingress : netpol->egress) ||
		    !velo_pol_netpol_selects(netpol, pod))
			continue;
		found++;
		if (used >= len)
			continue;
		n = snprintf(buf + used, len - used, "%s%s/%s", used ? "," : "", netpol->ns,
			     netpol->name);
		used = n < 0 ? len : used + (size_t)n;
	}
	return found;
}
