// SPDX-License-Identifier: Apache-2.0
/* The policy objects kept by (namespace and) name (objects.h). */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cnp.h"
#include "policy/object.h"
#include "policy/objects.h"

/*
 * The kinds share put, del and find: each object starts with its
 * namespace (a cluster-scoped one: its name) and, for pods and
 * NetworkPolicies, has its name at name_offset. Each kind's index finds an object by name in constant time
 * (a LIST of 10,000 pods would be quadratic otherwise).
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

static void free_node(void *object)
{
	velo_pol_node_free(object);
}

static void free_cnp(void *object)
{
	velo_pol_cnp_free(object);
}

static const struct kind kinds[VELO_POL_KINDS] = {
	[VELO_POL_KIND_NAMESPACES] = { sizeof(struct velo_pol_namespace), 0, free_namespace },
	[VELO_POL_KIND_PODS] = { sizeof(struct velo_pol_pod), offsetof(struct velo_pol_pod, name),
				 free_pod },
	[VELO_POL_KIND_NETPOLS] = { sizeof(struct velo_pol_netpol),
				    offsetof(struct velo_pol_netpol, name), free_netpol },
	[VELO_POL_KIND_CNPS] = { sizeof(struct velo_pol_cnp), 0, free_cnp },
	[VELO_POL_KIND_NODES] = { sizeof(struct velo_pol_node_obj), 0, free_node },
};

#define SLOT_DELETED UINT_MAX

/* A kind's array and count in objects. */
static void **array_of(struct velo_pol_objects *objects, enum velo_pol_kind kind, unsigned **n)
{
	switch (kind) {
	case VELO_POL_KIND_NAMESPACES:
		*n = &objects->n_namespaces;
		return (void **)&objects->namespaces;
	case VELO_POL_KIND_PODS:
		*n = &objects->n_pods;
		return (void **)&objects->pods;
	case VELO_POL_KIND_NETPOLS:
		*n = &objects->n_netpols;
		return (void **)&objects->netpols;
	case VELO_POL_KIND_CNPS:
		*n = &objects->n_cnps;
		return (void **)&objects->cnps;
	default:
		*n = &objects->n_nodes;
		return (void **)&objects->nodes;
	}
}

/* FNV-1a over "ns/name" (a Namespace: its name). */
static unsigned name_hash(const char *ns, const char *name)
{
	unsigned hash = 2166136261u;

	for (const char *c = ns; *c; c++)
		hash = (hash ^ (unsigned char)*c) * 16777619u;
	for (const char *c = name; name && *c; c++)
		hash = (hash ^ (unsigned char)(c == name ? '/' : *c)) * 16777619u;
	return hash;
}

static const char *name_of(const struct kind *kind, const char *object)
{
	return kind->name_offset ? object + kind->name_offset : NULL;
}

/* The slot of (ns, name): its position's, or the empty one where it would go (-1 if full). */
static long slot_of(const struct velo_pol_index *index, const struct kind *kind, const char *base,
		    const char *ns, const char *name)
{
	long free_slot = -1;

	if (!index->slots)
		return -1;
	for (unsigned h = name_hash(ns, name) & index->mask, probes = 0; probes <= index->mask;
	     h = (h + 1) & index->mask, probes++) {
		unsigned slot = index->slots[h];
		const char *object;

		if (!slot)
			return free_slot >= 0 ? free_slot : (long)h;
		if (slot == SLOT_DELETED) {
			if (free_slot < 0)
				free_slot = h;
			continue;
		}
		object = base + (size_t)(slot - 1) * kind->size;
		if (!strcmp(object, ns) && (!name || !strcmp(name_of(kind, object), name)))
			return h;
	}
	return free_slot;
}

/* The index rebuilt for room for n + 1 objects (deleted slots dropped): 0 or -ENOMEM. */
static int index_grow(struct velo_pol_index *index, const struct kind *kind, const char *base,
		      unsigned n)
{
	struct velo_pol_index grown = {};
	unsigned size = 16;

	while (size < 2 * (n + 1))
		size *= 2;
	grown.slots = calloc(size, sizeof(*grown.slots));
	if (!grown.slots)
		return -ENOMEM;
	grown.mask = size - 1;
	for (unsigned i = 0; i < n; i++) {
		const char *object = base + (size_t)i * kind->size;
		long h = slot_of(&grown, kind, base, object, name_of(kind, object));

		grown.slots[h] = i + 1;
		grown.used++;
	}
	free(index->slots);
	*index = grown;
	return 0;
}

static long find(const struct velo_pol_objects *objects, enum velo_pol_kind kind, const char *ns,
		 const char *name)
{
	const struct velo_pol_index *index = &objects->index[kind];
	unsigned *n;
	void **base = array_of((struct velo_pol_objects *)objects, kind, &n);
	long h = slot_of(index, &kinds[kind], *base, ns, name);

	if (h < 0 || !index->slots[h] || index->slots[h] == SLOT_DELETED)
		return -1;
	return index->slots[h] - 1;
}

static int put(struct velo_pol_objects *objects, enum velo_pol_kind kind, void *object)
{
	const struct kind *k = &kinds[kind];
	struct velo_pol_index *index = &objects->index[kind];
	unsigned *n;
	void **base = array_of(objects, kind, &n);
	long i = find(objects, kind, object, name_of(k, object)), h;

	if (i >= 0) {
		k->free((char *)*base + (size_t)i * k->size);
	} else {
		void *grown = realloc(*base, (*n + 1) * k->size);

		if (!grown)
			return -ENOMEM;
		*base = grown;
		/* Half full at most, deleted slots counted: probes stay short and end. */
		if (2 * (index->used + 1) > index->mask + 1 && index_grow(index, k, *base, *n))
			return -ENOMEM;
		h = slot_of(index, k, *base, object, name_of(k, object));
		if (!index->slots[h])
			index->used++;
		i = (*n)++;
		index->slots[h] = (unsigned)i + 1;
	}
	memcpy((char *)*base + (size_t)i * k->size, object, k->size);
	memset(object, 0, k->size);
	return 0;
}

static int del(struct velo_pol_objects *objects, enum velo_pol_kind kind, const char *ns,
	       const char *name)
{
	const struct kind *k = &kinds[kind];
	struct velo_pol_index *index = &objects->index[kind];
	unsigned *n;
	void **base = array_of(objects, kind, &n);
	long h = slot_of(index, k, *base, ns, name), i;
	char *slot;

	if (h < 0 || !index->slots[h] || index->slots[h] == SLOT_DELETED)
		return 0;
	i = index->slots[h] - 1;
	index->slots[h] = SLOT_DELETED;
	slot = (char *)*base + (size_t)i * k->size;
	k->free(slot);
	if ((unsigned)i != --*n) {
		/* The last object moves into the hole: its slot follows. */
		const char *last = (char *)*base + (size_t)*n * k->size;

		h = slot_of(index, k, *base, last, name_of(k, last));
		memcpy(slot, last, k->size);
		index->slots[h] = (unsigned)i + 1;
	}
	return 1;
}

int velo_pol_objects_put_namespace(struct velo_pol_objects *state, struct velo_pol_namespace *ns)
{
	return put(state, VELO_POL_KIND_NAMESPACES, ns);
}

int velo_pol_objects_put_pod(struct velo_pol_objects *state, struct velo_pol_pod *pod)
{
	return put(state, VELO_POL_KIND_PODS, pod);
}

int velo_pol_objects_put_netpol(struct velo_pol_objects *state, struct velo_pol_netpol *netpol)
{
	return put(state, VELO_POL_KIND_NETPOLS, netpol);
}

int velo_pol_objects_put_cnp(struct velo_pol_objects *state, struct velo_pol_cnp *cnp)
{
	return put(state, VELO_POL_KIND_CNPS, cnp);
}

int velo_pol_objects_del_cnp(struct velo_pol_objects *state, const char *name)
{
	return del(state, VELO_POL_KIND_CNPS, name, NULL);
}

int velo_pol_objects_put_node(struct velo_pol_objects *state, struct velo_pol_node_obj *node)
{
	return put(state, VELO_POL_KIND_NODES, node);
}

int velo_pol_objects_del_node(struct velo_pol_objects *state, const char *name)
{
	return del(state, VELO_POL_KIND_NODES, name, NULL);
}

const struct velo_pol_node_obj *velo_pol_objects_node(const struct velo_pol_objects *state,
						      const char *name)
{
	long i = find(state, VELO_POL_KIND_NODES, name, NULL);

	return i < 0 ? NULL : &state->nodes[i];
}

int velo_pol_objects_del_namespace(struct velo_pol_objects *state, const char *name)
{
	return del(state, VELO_POL_KIND_NAMESPACES, name, NULL);
}

int velo_pol_objects_del_pod(struct velo_pol_objects *state, const char *ns, const char *name)
{
	return del(state, VELO_POL_KIND_PODS, ns, name);
}

int velo_pol_objects_del_netpol(struct velo_pol_objects *state, const char *ns, const char *name)
{
	return del(state, VELO_POL_KIND_NETPOLS, ns, name);
}

const struct velo_pol_namespace *velo_pol_objects_namespace(const struct velo_pol_objects *state,
							    const char *name)
{
	long i = find(state, VELO_POL_KIND_NAMESPACES, name, NULL);

	return i < 0 ? NULL : &state->namespaces[i];
}

const struct velo_pol_pod *velo_pol_objects_pod(const struct velo_pol_objects *state,
						const char *ns, const char *name)
{
	long i = find(state, VELO_POL_KIND_PODS, ns, name);

	return i < 0 ? NULL : &state->pods[i];
}

void velo_pol_objects_swap_kind(struct velo_pol_objects *a, struct velo_pol_objects *b,
				enum velo_pol_kind kind)
{
	struct velo_pol_index index = a->index[kind];
	unsigned *n_a, *n_b, n;
	void **base_a = array_of(a, kind, &n_a), **base_b = array_of(b, kind, &n_b), *base;

	base = *base_a;
	*base_a = *base_b;
	*base_b = base;
	n = *n_a;
	*n_a = *n_b;
	*n_b = n;
	a->index[kind] = b->index[kind];
	b->index[kind] = index;
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
	for (unsigned i = 0; i < state->n_cnps; i++)
		velo_pol_cnp_free(&state->cnps[i]);
	for (unsigned i = 0; i < state->n_nodes; i++)
		velo_pol_node_free(&state->nodes[i]);
	free(state->nodes);
	free(state->netpols);
	free(state->cnps);
	for (unsigned i = 0; i < VELO_POL_KINDS; i++)
		free(state->index[i].slots);
	memset(state, 0, sizeof(*state));
}
