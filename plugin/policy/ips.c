// SPDX-License-Identifier: Apache-2.0
/*
 * The address map's entries (ips.h). One key can come from several
 * sources (a pod's /32 that an ipBlock also names, a prefix inside a Service
 * CIDR): they merge, flags joined, the pod identity of a pod of this node
 * winning over one the API still shows for another pod.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/cidr.h"
#include "policy/ips.h"

struct ip_list {
	const struct velo_pol_build *build;
	struct velo_pol_ip_entry *entries;
	unsigned n, cap;
};

static int add(struct ip_list *list, const struct velo_pol_cidr *cidr, __u32 pod_id, __u32 flags)
{
	const struct velo_pol_node *node = list->build->node;
	struct velo_pol_ip_entry *entry;

	if (velo_pol_grow((void **)&list->entries, list->n, &list->cap, sizeof(*entry)))
		return -ENOMEM;
	entry = &list->entries[list->n++];
	memset(entry, 0, sizeof(*entry));
	velo_pol_cidr_key(cidr, &entry->key);
	entry->value.pod_id = pod_id;
	entry->value.cidr_id = velo_pol_build_cidr_id(list->build, cidr);
	entry->value.flags = flags;
	for (unsigned i = 0; i < node->n_service_cidrs; i++)
		if (velo_pol_cidr_inside(cidr, &node->service_cidrs[i]))
			entry->value.flags |= VELO_POL_IP_SERVICE;
	return 0;
}

/* Pod addresses: this node's from their records, the others' from status.podIPs. */
static int add_pods(struct ip_list *list, const struct velo_pol_tables *tables)
{
	const struct velo_pol_build *build = list->build;
	const struct velo_pol_objects *objects = build->objects;

	for (unsigned i = 0; i < tables->n_placed; i++) {
		const struct velo_pol_local_pod *local = &build->node->local[i];

		for (unsigned a = 0; tables->placed[i].id && a < local->n_ips; a++)
			if (add(list, &local->ips[a], tables->placed[i].id, VELO_POL_IP_LOCAL))
				return -ENOMEM;
	}
	for (unsigned i = 0; i < objects->n_pods; i++) {
		const struct velo_pol_pod *pod = &objects->pods[i];
		const struct velo_pol_placed *placed;

		if (build->pod_ident[i] == UINT_MAX)
			continue;
		placed = velo_pol_tables_placed(tables, pod->ns, pod->name);
		if (placed && placed->id)
			continue; /* its record's addresses are placed */
		for (unsigned a = 0; a < pod->n_ips; a++)
			if (add(list, &pod->ips[a], build->idents[build->pod_ident[i]].id, 0))
				return -ENOMEM;
	}
	return 0;
}

/* Key order; among equal keys, the order they were added in. */
static int cmp_added(const void *a, const void *b)
{
	const struct velo_pol_ip_entry *x = a, *y = b;
	int cmp = velo_pol_ip_cmp(&x->key, &y->key);

	return cmp ? cmp : x->value.pad < y->value.pad ? -1 : x->value.pad > y->value.pad;
}

/* Entries of one key into one: prefer a pod of this node, then any pod identity. */
static void merge(struct velo_pol_ip *into, const struct velo_pol_ip *from)
{
	bool from_wins = into->pod_id == VELO_ID_NONE ||
			 ((from->flags & VELO_POL_IP_LOCAL) && !(into->flags & VELO_POL_IP_LOCAL));

	if (from_wins && from->pod_id != VELO_ID_NONE)
		into->pod_id = from->pod_id;
	into->flags |= from->flags;
}

int velo_pol_ips_build(const struct velo_pol_build *build, struct velo_pol_tables *tables)
{
	const struct velo_pol_node *node = build->node;
	struct velo_pol_cidr all4 = { .family = AF_INET }, all6 = { .family = AF_INET6 };
	struct ip_list list = { .build = build };
	unsigned n = 0;
	int ret = 0;

	ret = add(&list, &all4, VELO_ID_NONE, 0);
	if (!ret)
		ret = add(&list, &all6, VELO_ID_NONE, 0);
	for (unsigned i = 0; !ret && i < build->n_prefixes; i++)
		ret = add(&list, &build->prefixes[i].cidr, VELO_ID_NONE, 0);
	for (unsigned i = 0; !ret && i < node->n_service_cidrs; i++)
		ret = add(&list, &node->service_cidrs[i], VELO_ID_NONE, VELO_POL_IP_SERVICE);
	for (unsigned i = 0; !ret && i < node->n_addrs; i++)
		ret = add(&list, &node->addrs[i], VELO_ID_HOST, 0);
	if (!ret)
		ret = add_pods(&list, tables);
	if (ret) {
		free(list.entries);
		return ret;
	}
	/* Stable: the first of a key (a default, a prefix, ...) takes the others in. */
	for (unsigned i = 0; i < list.n; i++)
		list.entries[i].value.pad = i;
	qsort(list.entries, list.n, sizeof(*list.entries), cmp_added);
	for (unsigned i = 0; i < list.n; i++) {
		list.entries[i].value.pad = 0;
		if (n && !velo_pol_ip_cmp(&list.entries[n - 1].key, &list.entries[i].key))
			merge(&list.entries[n - 1].value, &list.entries[i].value);
		else
			list.entries[n++] = list.entries[i];
	}
	tables->ips = list.entries;
	tables->n_ips = n;
	return 0;
}
