// SPDX-License-Identifier: Apache-2.0
/* Namespaces, Pods and NetworkPolicies kept by name, and freeing them (pol_objects.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "policy/pol_objects.h"

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

void velo_pol_pod_free(struct velo_pol_pod *pod)
{
	velo_pol_labels_free(&pod->labels);
	free(pod->ports);
	memset(pod, 0, sizeof(*pod));
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
	memset(netpol, 0, sizeof(*netpol));
}

/*
 * The three kinds share put and del: each object starts with its namespace
 * (a Namespace: its name) and, for pods and policies, its name after it.
 */
struct kind {
	size_t size, name_offset; /* name_offset 0: a Namespace, keyed by its first field */
	void (*free)(void *object);
};

static void free_namespace(void *object)
{
	velo_pol_namespace_free(object);
}

static void free_pod(void *object)
{
	velo_pol_pod_free(object);
}

static void free_netpol(void *object)
{
	velo_pol_netpol_free(object);
}

static const struct kind namespace_kind = { sizeof(struct velo_pol_namespace), 0, free_namespace };
static const struct kind pod_kind = { sizeof(struct velo_pol_pod),
				      offsetof(struct velo_pol_pod, name), free_pod };
static const struct kind netpol_kind = { sizeof(struct velo_pol_netpol),
					 offsetof(struct velo_pol_netpol, name), free_netpol };

static long find(const struct kind *kind, const void *base, unsigned n, const char *ns,
		 const char *name)
{
	for (unsigned i = 0; i < n; i++) {
		const char *object = (const char *)base + (size_t)i * kind->size;

		if (!strcmp(object, ns) &&
		    (!kind->name_offset || !strcmp(object + kind->name_offset, name)))
			return i;
	}
	return -1;
}

static int put(const struct kind *kind, void **base, unsigned *n, void *object)
{
	const char *name = kind->name_offset ? (const char *)object + kind->name_offset : NULL;
	long i = find(kind, *base, *n, object, name);

	if (i >= 0) {
		kind->free((char *)*base + (size_t)i * kind->size);
	} else {
		void *grown = realloc(*base, (*n + 1) * kind->size);

		if (!grown)
			return -ENOMEM;
		*base = grown;
		i = (*n)++;
	}
	memcpy((char *)*base + (size_t)i * kind->size, object, kind->size);
	memset(object, 0, kind->size);
	return 0;
}

static int del(const struct kind *kind, void *base, unsigned *n, const char *ns, const char *name)
{
	long i = find(kind, base, *n, ns, name);
	char *slot;

	if (i < 0)
		return 0;
	slot = (char *)base + (size_t)i * kind->size;
	kind->free(slot);
	if ((unsigned)i != --*n)
		memcpy(slot, (char *)base + (size_t)*n * kind->size, kind->size);
	return 1;
}

int velo_pol_objects_put_namespace(struct velo_pol_objects *state, struct velo_pol_namespace *ns)
{
	return put(&namespace_kind, (void **)&state->namespaces, &state->n_namespaces, ns);
}

int velo_pol_objects_put_pod(struct velo_pol_objects *state, struct velo_pol_pod *pod)
{
	return put(&pod_kind, (void **)&state->pods, &state->n_pods, pod);
}

int velo_pol_objects_put_netpol(struct velo_pol_objects *state, struct velo_pol_netpol *netpol)
{
	return put(&netpol_kind, (void **)&state->netpols, &state->n_netpols, netpol);
}

int velo_pol_objects_del_namespace(struct velo_pol_objects *state, const char *name)
{
	return del(&namespace_kind, state->namespaces, &state->n_namespaces, name, NULL);
}

int velo_pol_objects_del_pod(struct velo_pol_objects *state, const char *ns, const char *name)
{
	return del(&pod_kind, state->pods, &state->n_pods, ns, name);
}

int velo_pol_objects_del_netpol(struct velo_pol_objects *state, const char *ns, const char *name)
{
	return del(&netpol_kind, state->netpols, &state->n_netpols, ns, name);
}

const struct velo_pol_namespace *velo_pol_objects_namespace(const struct velo_pol_objects *state,
							    const char *name)
{
	long i = find(&namespace_kind, state->namespaces, state->n_namespaces, name, NULL);

	return i < 0 ? NULL : &state->namespaces[i];
}

const struct velo_pol_pod *velo_pol_objects_pod(const struct velo_pol_objects *state,
						const char *ns, const char *name)
{
	long i = find(&pod_kind, state->pods, state->n_pods, ns, name);

	return i < 0 ? NULL : &state->pods[i];
}

void velo_pol_objects_free(struct velo_pol_objects *state)
{
	for (unsigned i = 0; i < state->n_namespaces; i++)
		velo_pol_namespace_free(&state->namespaces[i]);
	for (unsigned i = 0; i < state->n_pods; i++)
		velo_pol_pod_free(&state->pods[i]);
	for (unsigned i = 0; i < state->n_netpols; i++)
		velo_pol_netpol_free(&state->netpols[i]);
	free(state->namespaces);
	free(state->pods);
	free(state->netpols);
	memset(state, 0, sizeof(*state));
}
