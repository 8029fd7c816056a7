// SPDX-License-Identifier: Apache-2.0
/*
 * The policy tables for this node (compute.h): the objects' identities
 * numbered (pod label sets, ipBlock and network prefixes, policies), then the
 * addresses placed (ips.c), the subjects and rules written (rules.c) and the
 * ClusterNetworkPolicy tiers (tiers.c).
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/audit.h"
#include "policy/build.h"
#include "policy/cidr.h"
#include "policy/compute.h"
#include "policy/ips.h"
#include "policy/numbering.h"
#include "policy/rules.h"
#include "policy/tiers.h"

static const char *proto_name(uint8_t proto)
{
	return proto == IPPROTO_UDP ? "UDP" : proto == IPPROTO_SCTP ? "SCTP" : "TCP";
}

/* "ns:<ns> labels:<k>=<v>,... ports:<name>/<proto>/<port>,...": readable, one per label set. */
static char *pod_key(const struct velo_pol_pod *pod)
{
	size_t len = 0;
	char *key = NULL;
	FILE *text = open_memstream(&key, &len);

	if (!text)
		return NULL;
	fprintf(text, "ns:%s labels:", pod->ns);
	for (unsigned i = 0; i < pod->labels.n; i++)
		fprintf(text, "%s%s=%s", i ? "," : "", pod->labels.items[i].key,
			pod->labels.items[i].value);
	if (pod->n_ports)
		fprintf(text, " ports:");
	for (unsigned i = 0; i < pod->n_ports; i++)
		fprintf(text, "%s%s/%s/%u", i ? "," : "", pod->ports[i].name,
			proto_name(pod->ports[i].proto), pod->ports[i].port);
	if (fclose(text)) {
		free(key);
		return NULL;
	}
	return key;
}

static int cmp_str_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* keys (n) sorted and made unique in place; returns how many are left (dropped ones freed). */
static unsigned unique_keys(char **keys, unsigned n)
{
	unsigned out = 0;

	if (!n)
		return 0;
	qsort(keys, n, sizeof(*keys), cmp_str_ptr);
	for (unsigned i = 0; i < n; i++) {
		if (out && !strcmp(keys[out - 1], keys[i]))
			free(keys[i]);
		else
			keys[out++] = keys[i];
	}
	return out;
}

static void free_keys(char **keys, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
}

static bool pod_eligible(const struct velo_pol_pod *pod)
{
	return !pod->host_network && !pod->finished;
}

static long key_index(char *const *keys, unsigned n, const char *key)
{
	char *const *found = bsearch(&key, keys, n, sizeof(*keys), cmp_str_ptr);

	return found ? found - keys : -1;
}

/* Pod identities: numbered, each with one of its pods; pod_ident per pod. */
static int number_pods(struct velo_pol_build *build, struct velo_pol_numbering *numbering)
{
	const struct velo_pol_objects *objects = build->objects;
	char **keys = calloc(objects->n_pods + 1, sizeof(*keys)), **pod_keys;
	unsigned n = 0;
	__u32 *ids;
	int ret = -ENOMEM;

	pod_keys = calloc(objects->n_pods + 1, sizeof(*pod_keys));
	build->pod_ident = calloc(objects->n_pods + 1, sizeof(*build->pod_ident));
	if (!keys || !pod_keys || !build->pod_ident)
		goto out;
	for (unsigned i = 0; i < objects->n_pods; i++) {
		build->pod_ident[i] = UINT_MAX;
		if (!pod_eligible(&objects->pods[i]))
			continue;
		pod_keys[i] = pod_key(&objects->pods[i]);
		keys[n] = pod_keys[i] ? strdup(pod_keys[i]) : NULL;
		if (!keys[n])
			goto out;
		n++;
	}
	n = unique_keys(keys, n);
	ids = calloc(n + 1, sizeof(*ids));
	build->idents = calloc(n + 1, sizeof(*build->idents));
	if (!ids || !build->idents) {
		free(ids);
		goto out;
	}
	ret = velo_pol_ids_assign(&numbering->pods, keys, n, ids);
	build->audited = calloc(n + 1, sizeof(*build->audited));
	if (!ret && !build->audited)
		ret = -ENOMEM;
	if (!ret) {
		build->n_idents = n;
		for (unsigned i = 0; i < n; i++) {
			build->idents[i].id = ids[i];
			build->idents[i].key = numbering->pods.items[i].key;
		}
		for (unsigned i = 0; i < objects->n_pods; i++) {
			const struct velo_pol_namespace *ns;
			struct velo_pol_ident *ident;

			if (!pod_keys[i])
				continue;
			build->pod_ident[i] = (unsigned)key_index(keys, n, pod_keys[i]);
			ident = &build->idents[build->pod_ident[i]];
			if (ident->pod)
				continue;
			ident->pod = &objects->pods[i];
			ns = velo_pol_objects_namespace(objects, objects->pods[i].ns);
			ident->ns_labels = ns ? &ns->labels : NULL;
		}
	}
	free(ids);
out:
	free_keys(keys, n);
	for (unsigned i = 0; pod_keys && i < objects->n_pods; i++)
		free(pod_keys[i]);
	free(pod_keys);
	return ret;
}

static int add_prefix_key(char ***keys, unsigned *n, unsigned *cap,
			  const struct velo_pol_cidr *cidr)
{
	char text[64];

	if (velo_pol_grow((void **)keys, *n, cap, sizeof(**keys)))
		return -ENOMEM;
	(*keys)[*n] = strdup(velo_pol_cidr_text(cidr, text, sizeof(text)));
	if (!(*keys)[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int cmp_prefix_longest(const void *a, const void *b)
{
	const struct velo_pol_prefix *x = a, *y = b;
	int lx = x->cidr.family == AF_INET ? x->cidr.prefix + 96 : x->cidr.prefix;
	int ly = y->cidr.family == AF_INET ? y->cidr.prefix + 96 : y->cidr.prefix;

	return ly - lx;
}

/* ClusterNetworkPolicies' networks, and every node address when a nodes peer asks for them. */
static int add_cnp_prefixes(const struct velo_pol_objects *objects, char ***keys, unsigned *n,
			    unsigned *cap)
{
	bool nodes = false;
	int ret = 0;

	for (unsigned c = 0; !ret && c < objects->n_cnps; c++) {
		const struct velo_pol_cnp *cnp = &objects->cnps[c];

		for (unsigned r = 0; !ret && r < cnp->n_egress; r++)
			for (unsigned p = 0; !ret && p < cnp->egress_rules[r].n_peers; p++) {
				const struct velo_pol_cnp_peer *peer =
					&cnp->egress_rules[r].peers[p];

				nodes |= peer->kind == VELO_POL_CNP_PEER_NODES;
				for (unsigned i = 0; !ret && i < peer->n_networks; i++)
					ret = add_prefix_key(keys, n, cap, &peer->networks[i]);
			}
	}
	for (unsigned i = 0; !ret && nodes && i < objects->n_nodes; i++)
		for (unsigned a = 0; !ret && a < objects->nodes[i].n_addrs; a++)
			ret = add_prefix_key(keys, n, cap, &objects->nodes[i].addrs[a]);
	return ret;
}

/* Every prefix an ipBlock, network or node address names, numbered; build->prefixes longest first. */
static int number_prefixes(struct velo_pol_build *build, struct velo_pol_numbering *numbering)
{
	const struct velo_pol_objects *objects = build->objects;
	unsigned n = 0, cap = 0;
	char **keys = NULL;
	__u32 *ids = NULL;
	int ret = 0;

	for (unsigned p = 0; !ret && p < objects->n_netpols; p++) {
		const struct velo_pol_netpol *netpol = &objects->netpols[p];

		for (unsigned r = 0; !ret && r < netpol->n_ingress + netpol->n_egress; r++) {
			const struct velo_pol_np_rule *rule =
				r < netpol->n_ingress
					? &netpol->ingress_rules[r]
					: &netpol->egress_rules[r - netpol->n_ingress];

			for (unsigned i = 0; !ret && i < rule->n_peers; i++) {
				const struct velo_pol_peer *peer = &rule->peers[i];

				if (!peer->has_block)
					continue;
				ret = add_prefix_key(&keys, &n, &cap, &peer->block);
				for (unsigned e = 0; !ret && e < peer->n_except; e++)
					ret = add_prefix_key(&keys, &n, &cap, &peer->except[e]);
			}
		}
	}
	if (!ret)
		ret = add_cnp_prefixes(objects, &keys, &n, &cap);
	if (!ret) {
		n = unique_keys(keys, n);
		ids = calloc(n + 1, sizeof(*ids));
		build->prefixes = calloc(n + 1, sizeof(*build->prefixes));
		ret = ids && build->prefixes ? velo_pol_ids_assign(&numbering->cidrs, keys, n, ids)
					     : -ENOMEM;
	}
	for (unsigned i = 0; !ret && i < n; i++) {
		velo_pol_cidr_parse(keys[i], !strchr(keys[i], '/'), &build->prefixes[i].cidr);
		build->prefixes[i].id = ids[i];
	}
	if (!ret) {
		build->n_prefixes = n;
		qsort(build->prefixes, n, sizeof(*build->prefixes), cmp_prefix_longest);
	}
	free(ids);
	free_keys(keys, n);
	return ret;
}

/* NetworkPolicies as "ns/name", ClusterNetworkPolicies as "cnp:name" (no namespace has a ':'). */
static int policy_key(const struct velo_pol_objects *objects, unsigned i, char **key)
{
	if (i < objects->n_netpols)
		return asprintf(key, "%s/%s", objects->netpols[i].ns, objects->netpols[i].name);
	return asprintf(key, "cnp:%s", objects->cnps[i - objects->n_netpols].name);
}

static int number_policies(struct velo_pol_build *build, struct velo_pol_numbering *numbering)
{
	const struct velo_pol_objects *objects = build->objects;
	unsigned total = objects->n_netpols + objects->n_cnps, n = 0;
	char **keys = calloc(total + 1, sizeof(*keys));
	__u32 *ids = calloc(total + 1, sizeof(*ids));
	int ret = -ENOMEM;

	build->policy_ids = calloc(objects->n_netpols + 1, sizeof(*build->policy_ids));
	build->cnp_ids = calloc(objects->n_cnps + 1, sizeof(*build->cnp_ids));
	if (!keys || !ids || !build->policy_ids || !build->cnp_ids)
		goto out;
	for (; n < total; n++)
		if (policy_key(objects, n, &keys[n]) < 0)
			goto out;
	n = unique_keys(keys, n); /* names are unique already: sorts */
	ret = velo_pol_ids_assign(&numbering->policies, keys, n, ids);
	for (unsigned i = 0; !ret && i < total; i++) {
		char *name;
		long at;

		if (policy_key(objects, i, &name) < 0) {
			ret = -ENOMEM;
			break;
		}
		at = key_index(keys, n, name);
		free(name);
		if (i < objects->n_netpols)
			build->policy_ids[i] = at >= 0 ? ids[at] : 0;
		else
			build->cnp_ids[i - objects->n_netpols] = at >= 0 ? ids[at] : 0;
	}
out:
	free(ids);
	free_keys(keys, n);
	return ret;
}

static int list_identities(const struct velo_pol_numbering *numbering,
			   struct velo_pol_tables *tables)
{
	unsigned n = numbering->pods.n + numbering->cidrs.n;

	tables->identities = calloc(n + 1, sizeof(*tables->identities));
	if (!tables->identities)
		return -ENOMEM;
	for (unsigned i = 0; i < numbering->pods.n; i++)
		tables->identities[tables->n_identities++] =
			(struct velo_pol_identity){ numbering->pods.items[i].id,
						    numbering->pods.items[i].key };
	for (unsigned i = 0; i < numbering->cidrs.n; i++)
		tables->identities[tables->n_identities++] =
			(struct velo_pol_identity){ numbering->cidrs.items[i].id,
						    numbering->cidrs.items[i].key };
	qsort(tables->identities, n, sizeof(*tables->identities), velo_pol_id_cmp);
	return 0;
}

/* The node's pods: their Pod objects' identities (a pod scheduled elsewhere isn't this one). */
static int place_local(struct velo_pol_build *build, struct velo_pol_tables *tables)
{
	const struct velo_pol_node *node = build->node;
	const struct velo_pol_objects *objects = build->objects;

	tables->placed = calloc(node->n_local + 1, sizeof(*tables->placed));
	if (!tables->placed)
		return -ENOMEM;
	tables->n_placed = node->n_local;
	for (unsigned i = 0; i < node->n_local; i++) {
		const struct velo_pol_pod *pod =
			velo_pol_objects_pod(objects, node->local[i].ns, node->local[i].name);
		struct velo_pol_placed *placed = &tables->placed[i];
		unsigned ident;

		snprintf(placed->ns, sizeof(placed->ns), "%s", node->local[i].ns);
		snprintf(placed->name, sizeof(placed->name), "%s", node->local[i].name);
		if (!pod) {
			placed->unplaced = "no Pod object of this name (yet)";
			continue;
		}
		if (pod->node[0] && node->name && node->name[0] && strcmp(pod->node, node->name)) {
			placed->unplaced = "its Pod object is scheduled to another node";
			continue;
		}
		ident = build->pod_ident[pod - objects->pods];
		if (ident == UINT_MAX) {
			placed->unplaced = pod->host_network ? "its Pod object says hostNetwork"
							     : "its Pod has finished";
			continue;
		}
		placed->id = build->idents[ident].id;
		build->idents[ident].local = true;
	}
	return 0;
}

int velo_pol_tables_build(const struct velo_pol_objects *objects, const struct velo_pol_node *node,
			  struct velo_pol_numbering *numbering, struct velo_pol_tables *tables)
{
	struct velo_pol_build build = { .objects = objects, .node = node };
	int ret;

	memset(tables, 0, sizeof(*tables));
	if (!numbering->ready)
		velo_pol_numbering_init(numbering);
	ret = number_pods(&build, numbering);
	if (!ret)
		ret = number_prefixes(&build, numbering);
	if (!ret)
		ret = number_policies(&build, numbering);
	if (!ret)
		ret = list_identities(numbering, tables);
	if (!ret)
		ret = place_local(&build, tables);
	if (!ret)
		ret = velo_pol_ips_build(&build, tables);
	if (!ret)
		ret = velo_pol_rules_build(&build, tables);
	if (!ret)
		ret = velo_pol_tiers_build(&build, tables);
	if (!ret)
		ret = velo_pol_audit_build(&build, tables);
	free(build.idents);
	free(build.audited);
	free(build.pod_ident);
	free(build.prefixes);
	free(build.policy_ids);
	free(build.cnp_ids);
	if (ret)
		velo_pol_tables_free(tables);
	return ret;
}
