// SPDX-License-Identifier: Apache-2.0
/* One object's release and comparison (object.h). */
#include <stdlib.h>
#include <string.h>

#include "policy/object.h"

void velo_pol_labels_free(struct velo_pol_labels *labels)
{
	for (unsigned i = 0; i < labels->n; i++) {
		free(labels->items[i].key);
		free(labels->items[i].value);
	}
	free(labels->items);
	memset(labels, 0, sizeof(*labels));
}

const char *velo_pol_labels_get(const struct velo_pol_labels *labels, const char *key)
{
	unsigned lo = 0, hi = labels->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		int cmp = strcmp(key, labels->items[mid].key);

		if (!cmp)
			return labels->items[mid].value;
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

void velo_pol_selector_free(struct velo_pol_selector *selector)
{
	velo_pol_labels_free(&selector->match);
	for (unsigned i = 0; i < selector->n_exprs; i++) {
		struct velo_pol_expr *expr = &selector->exprs[i];

		for (unsigned v = 0; v < expr->n_values; v++)
			free(expr->values[v]);
		free(expr->values);
		free(expr->key);
	}
	free(selector->exprs);
	memset(selector, 0, sizeof(*selector));
}

void velo_pol_namespace_free(struct velo_pol_namespace *ns)
{
	velo_pol_labels_free(&ns->labels);
	memset(ns, 0, sizeof(*ns));
}

void velo_pol_node_free(struct velo_pol_node_obj *node)
{
	velo_pol_labels_free(&node->labels);
	memset(node, 0, sizeof(*node));
}

void velo_pol_pod_free(struct velo_pol_pod *pod)
{
	velo_pol_labels_free(&pod->labels);
	free(pod->ports);
	free(pod->problem);
	memset(pod, 0, sizeof(*pod));
}

static bool labels_equal(const struct velo_pol_labels *a, const struct velo_pol_labels *b)
{
	if (a->n != b->n)
		return false;
	for (unsigned i = 0; i < a->n; i++)
		if (strcmp(a->items[i].key, b->items[i].key) ||
		    strcmp(a->items[i].value, b->items[i].value))
			return false;
	return true;
}

/* Field by field: padding bytes say nothing. */
static bool ips_ports_equal(const struct velo_pol_pod *a, const struct velo_pol_pod *b)
{
	if (a->n_ips != b->n_ips || a->n_ports != b->n_ports)
		return false;
	for (unsigned i = 0; i < a->n_ips; i++)
		if (a->ips[i].family != b->ips[i].family || a->ips[i].prefix != b->ips[i].prefix ||
		    memcmp(a->ips[i].addr, b->ips[i].addr, sizeof(a->ips[i].addr)))
			return false;
	for (unsigned i = 0; i < a->n_ports; i++)
		if (strcmp(a->ports[i].name, b->ports[i].name) ||
		    a->ports[i].proto != b->ports[i].proto || a->ports[i].port != b->ports[i].port)
			return false;
	return true;
}

static bool problem_equal(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

bool velo_pol_pod_equal(const struct velo_pol_pod *a, const struct velo_pol_pod *b)
{
	return problem_equal(a->problem, b->problem) && !strcmp(a->ns, b->ns) &&
	       !strcmp(a->name, b->name) && !strcmp(a->node, b->node) && !strcmp(a->uid, b->uid) &&
	       a->host_network == b->host_network && a->finished == b->finished &&
	       ips_ports_equal(a, b) && labels_equal(&a->labels, &b->labels);
}

bool velo_pol_node_equal(const struct velo_pol_node_obj *a, const struct velo_pol_node_obj *b)
{
	return labels_equal(&a->labels, &b->labels) && a->n_addrs == b->n_addrs &&
	       !memcmp(a->addrs, b->addrs, sizeof(a->addrs));
}

bool velo_pol_namespace_equal(const struct velo_pol_namespace *a,
			      const struct velo_pol_namespace *b)
{
	return !strcmp(a->name, b->name) && labels_equal(&a->labels, &b->labels);
}

static void rules_free(struct velo_pol_np_rule *rules, unsigned n)
{
	for (unsigned r = 0; r < n; r++) {
		for (unsigned p = 0; p < rules[r].n_peers; p++) {
			struct velo_pol_peer *peer = &rules[r].peers[p];

			velo_pol_selector_free(&peer->pods);
			velo_pol_selector_free(&peer->namespaces);
			free(peer->except);
		}
		free(rules[r].peers);
		free(rules[r].ports);
	}
	free(rules);
}

void velo_pol_netpol_free(struct velo_pol_netpol *netpol)
{
	velo_pol_selector_free(&netpol->subject);
	rules_free(netpol->ingress_rules, netpol->n_ingress);
	rules_free(netpol->egress_rules, netpol->n_egress);
	free(netpol->problem);
	memset(netpol, 0, sizeof(*netpol));
}
