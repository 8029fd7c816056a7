// SPDX-License-Identifier: Apache-2.0
/*
 * ClusterNetworkPolicy tiers (tiers.h). A rule's peers become identities as
 * NetworkPolicy's do (rules.c): the pod identities its namespaces or pods
 * selectors match, the prefixes inside its networks, the addresses of the
 * Nodes its nodes selector matches (each its own prefix), VELO_ID_ANY for a rule
 * that failed closed. Ports: a number, a range's prefix cover, a protocol
 * alone, nothing (every protocol); a named port resolves per pod (the
 * subject's own for ingress, each peer's for egress), in any protocol the
 * pod names it with.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cidr.h"
#include "policy/ports.h"
#include "policy/selector.h"
#include "policy/tiers.h"

#define RULES_PER_POLICY 32 /* rank stride: the API allows 25 rules per direction */

struct tier_list {
	const struct velo_pol_build *build;
	struct velo_pol_tier_entry *entries;
	unsigned n, cap;
	struct velo_pol_targets targets; /* one rule's peers, reused */
};

/* What one rule writes: to whom, in which tier and direction, with what. */
struct rule_at {
	__u32 subject;
	__u8 dir; /* VELO_POL_TIER_* | VELO_POL_DIR_* */
	struct velo_pol_tier_rule value;
};

bool velo_pol_cnp_selects_pod(const struct velo_pol_cnp *cnp, const struct velo_pol_pod *pod,
			      const struct velo_pol_labels *ns_labels)
{
	return velo_pol_selector_match(&cnp->subject_ns, ns_labels) &&
	       (!cnp->has_subject_pods ||
		velo_pol_selector_match(&cnp->subject_pods, &pod->labels));
}

static bool cnp_selects(const struct velo_pol_cnp *cnp, const struct velo_pol_ident *ident)
{
	struct velo_pol_label spare_label;
	struct velo_pol_labels spare;

	return velo_pol_cnp_selects_pod(cnp, ident->pod,
					velo_pol_ident_ns_labels(ident, &spare, &spare_label));
}

static int add(struct tier_list *list, const struct rule_at *at, __u32 peer, __u8 proto,
	       uint16_t port, unsigned port_bits)
{
	struct velo_pol_tier_entry *entry;

	if (velo_pol_grow((void **)&list->entries, list->n, &list->cap, sizeof(*entry)))
		return -ENOMEM;
	entry = &list->entries[list->n++];
	velo_pol_rule_key_init(&entry->key, at->subject, peer, at->dir, proto, port, port_bits);
	entry->value = at->value;
	return 0;
}

static bool in_networks(const struct velo_pol_cnp_peer *peer, const struct velo_pol_cidr *prefix)
{
	for (unsigned i = 0; i < peer->n_networks; i++)
		if (velo_pol_cidr_inside(prefix, &peer->networks[i]))
			return true;
	return false;
}

/* A nodes peer: the prefixes that are the addresses of the Nodes it selects. */
static int expand_nodes(struct tier_list *list, const struct velo_pol_cnp_peer *peer)
{
	const struct velo_pol_build *build = list->build;
	const struct velo_pol_objects *objects = build->objects;

	for (unsigned n = 0; n < objects->n_nodes; n++) {
		const struct velo_pol_node_obj *node = &objects->nodes[n];

		if (!velo_pol_selector_match(&peer->nodes, &node->labels))
			continue;
		for (unsigned a = 0; a < node->n_addrs; a++)
			for (unsigned i = 0; i < build->n_prefixes; i++)
				if (velo_pol_cidr_inside(&build->prefixes[i].cidr,
							 &node->addrs[a]) &&
				    velo_pol_cidr_inside(&node->addrs[a],
							 &build->prefixes[i].cidr) &&
				    velo_pol_targets_add(&list->targets, build->prefixes[i].id,
							 NULL))
					return -ENOMEM;
	}
	return 0;
}

static bool peer_selects(const struct velo_pol_cnp_peer *peer, const struct velo_pol_ident *ident)
{
	struct velo_pol_label spare_label;
	struct velo_pol_labels spare;

	return velo_pol_selector_match(&peer->namespaces,
				       velo_pol_ident_ns_labels(ident, &spare, &spare_label)) &&
	       (peer->kind != VELO_POL_CNP_PEER_PODS ||
		velo_pol_selector_match(&peer->pods, &ident->pod->labels));
}

/* The rule's peers as identities into list->targets. */
static int expand_peers(struct tier_list *list, const struct velo_pol_cnp_rule *rule)
{
	const struct velo_pol_build *build = list->build;

	list->targets.n = 0;
	if (rule->any_peer)
		return velo_pol_targets_add(&list->targets, VELO_ID_ANY, NULL);
	for (unsigned p = 0; p < rule->n_peers; p++) {
		const struct velo_pol_cnp_peer *peer = &rule->peers[p];

		if (peer->kind == VELO_POL_CNP_PEER_NODES) {
			if (expand_nodes(list, peer))
				return -ENOMEM;
			continue;
		}
		if (peer->kind == VELO_POL_CNP_PEER_NETWORKS) {
			for (unsigned i = 0; i < build->n_prefixes; i++)
				if (in_networks(peer, &build->prefixes[i].cidr) &&
				    velo_pol_targets_add(&list->targets, build->prefixes[i].id,
							 NULL))
					return -ENOMEM;
			continue;
		}
		for (unsigned i = 0; i < build->n_idents; i++)
			if (peer_selects(peer, &build->idents[i]) &&
			    velo_pol_targets_add(&list->targets, build->idents[i].id,
						 &build->idents[i]))
				return -ENOMEM;
	}
	return 0;
}

/* A named port of pod to one peer: an entry per number, in whatever protocol it has. */
static int add_named(struct tier_list *list, const struct rule_at *at, __u32 peer,
		     const struct velo_pol_pod *pod, const char *name)
{
	for (unsigned i = 0; i < pod->n_ports; i++)
		if (!strcmp(pod->ports[i].name, name) &&
		    add(list, at, peer, pod->ports[i].proto, pod->ports[i].port, 16))
			return -ENOMEM;
	return 0;
}

static int add_port(struct tier_list *list, const struct rule_at *at,
		    const struct velo_pol_ident *subject, const struct velo_pol_port *port)
{
	struct velo_pol_port_prefix cover[VELO_POL_PORT_PREFIXES_MAX];
	bool egress = (at->dir & VELO_POL_DIR_EGRESS) != 0;
	unsigned n_cover;

	if (port->name[0]) {
		/* Egress: each peer pod's numbers (prefixes have none); ingress: the subject's. */
		for (unsigned t = 0; t < list->targets.n; t++) {
			const struct velo_pol_target *target = &list->targets.items[t];
			const struct velo_pol_pod *pod = !egress	 ? subject->pod
							 : target->ident ? target->ident->pod
									 : NULL;

			if (pod && add_named(list, at, target->id, pod, port->name))
				return -ENOMEM;
		}
		return 0;
	}
	n_cover = velo_pol_port_prefixes(port, cover);
	for (unsigned t = 0; t < list->targets.n; t++)
		for (unsigned c = 0; c < n_cover; c++)
			if (add(list, at, list->targets.items[t].id, port->proto, cover[c].port,
				cover[c].len))
				return -ENOMEM;
	return 0;
}

/* One direction's rules of one policy for one subject; *flags gains the direction's. */
static int add_rules(struct tier_list *list, const struct velo_pol_ident *subject,
		     const struct velo_pol_cnp *cnp, __u32 policy, __u32 rank, bool egress,
		     __u32 *flags)
{
	const struct velo_pol_cnp_rule *rules = egress ? cnp->egress_rules : cnp->ingress_rules;
	unsigned n = egress ? cnp->n_egress : cnp->n_ingress;
	__u8 tier = cnp->baseline ? VELO_POL_TIER_BASELINE : VELO_POL_TIER_ADMIN;

	if (!n)
		return 0; /* a policy without rules of a direction doesn't judge it */
	*flags |= cnp->baseline ? (egress ? VELO_POL_BASELINE_EGRESS : VELO_POL_BASELINE_INGRESS)
				: (egress ? VELO_POL_ADMIN_EGRESS : VELO_POL_ADMIN_INGRESS);
	for (unsigned r = 0; r < n; r++) {
		struct rule_at at = {
			.subject = subject->id,
			.dir = tier | (egress ? VELO_POL_DIR_EGRESS : VELO_POL_DIR_INGRESS),
			.value = { .rank = rank + r,
				   .policy = policy,
				   .rule = (__u16)r,
				   .action = rules[r].action },
		};

		if (expand_peers(list, &rules[r]))
			return -ENOMEM;
		for (unsigned t = 0; !rules[r].n_ports && t < list->targets.n; t++)
			if (add(list, &at, list->targets.items[t].id, 0, 0, 0))
				return -ENOMEM;
		for (unsigned p = 0; p < rules[r].n_ports; p++)
			if (add_port(list, &at, subject, &rules[r].ports[p]))
				return -ENOMEM;
	}
	return 0;
}

/* Tier, then priority, then name: the order the API evaluates policies in (ctx: the policies). */
static int cmp_cnp_order(const void *a, const void *b, void *ctx)
{
	const struct velo_pol_cnp *cnps = ctx;
	const struct velo_pol_cnp *x = &cnps[*(const unsigned *)a];
	const struct velo_pol_cnp *y = &cnps[*(const unsigned *)b];

	if (x->baseline != y->baseline)
		return x->baseline ? 1 : -1;
	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Key order; among equal keys the best rank first (the one kept). */
static int cmp_entry(const void *a, const void *b)
{
	const struct velo_pol_tier_entry *x = a, *y = b;
	int cmp = velo_pol_rule_cmp(&x->key, &y->key);

	return cmp ? cmp : x->value.rank < y->value.rank ? -1 : x->value.rank > y->value.rank;
}

static bool same_group(const struct velo_pol_rule_key *a, const struct velo_pol_rule_key *b)
{
	return a->subject == b->subject && a->peer == b->peer && a->dir == b->dir;
}

/*
 * Sorted entries made one per key, each the best rank of every entry
 * covering it within its (subject, peer, tier and direction): the trie's
 * longest match then answers with the first rule that matches.
 */
static unsigned resolve(struct velo_pol_tier_entry *entries, unsigned n)
{
	unsigned out = 0;

	for (unsigned start = 0, end; start < n; start = end) {
		for (end = start + 1; end < n && same_group(&entries[start].key, &entries[end].key);
		     end++)
			;
		for (unsigned i = start; i < end; i++)
			for (unsigned j = start; j < end; j++)
				if (entries[j].value.rank < entries[i].value.rank &&
				    velo_pol_rule_key_covers(&entries[j].key, &entries[i].key))
					entries[i].value = entries[j].value;
	}
	for (unsigned i = 0; i < n; i++)
		if (!out || velo_pol_rule_cmp(&entries[out - 1].key, &entries[i].key))
			entries[out++] = entries[i];
	return out;
}

/* flags into id's subject entry (a new one when it has none). */
static void merge_subject(struct velo_pol_tables *tables, __u32 id, __u32 flags)
{
	for (unsigned i = 0; i < tables->n_subjects; i++)
		if (tables->subjects[i].id == id) {
			tables->subjects[i].value.flags |= flags;
			return;
		}
	tables->subjects[tables->n_subjects++] =
		(struct velo_pol_subject_entry){ id, { flags, 0 } };
}

int velo_pol_cnp_order(const struct velo_pol_objects *objects, unsigned **order)
{
	*order = calloc(objects->n_cnps + 1, sizeof(**order));
	if (!*order)
		return -ENOMEM;
	for (unsigned i = 0; i < objects->n_cnps; i++)
		(*order)[i] = i;
	if (objects->n_cnps)
		qsort_r(*order, objects->n_cnps, sizeof(**order), cmp_cnp_order, objects->cnps);
	return 0;
}

int velo_pol_tiers_build(const struct velo_pol_build *build, struct velo_pol_tables *tables)
{
	const struct velo_pol_objects *objects = build->objects;
	struct tier_list list = { .build = build };
	unsigned *order;
	int ret = velo_pol_cnp_order(objects, &order);

	for (unsigned i = 0; !ret && i < build->n_idents; i++) {
		const struct velo_pol_ident *ident = &build->idents[i];
		__u32 flags = 0;

		if (!ident->local)
			continue;
		for (unsigned k = 0; !ret && k < objects->n_cnps; k++) {
			const struct velo_pol_cnp *cnp = &objects->cnps[order[k]];
			__u32 rank = k * RULES_PER_POLICY;

			if (!cnp_selects(cnp, ident))
				continue;
			if (velo_pol_build_audits(ident, cnp->audit)) {
				build->audited[i] = true;
				if (!build->shadow)
					continue;
			}
			ret = add_rules(&list, ident, cnp, build->cnp_ids[order[k]], rank, false,
					&flags);
			if (!ret)
				ret = add_rules(&list, ident, cnp, build->cnp_ids[order[k]], rank,
						true, &flags);
		}
		if (flags)
			merge_subject(tables, ident->id, flags);
	}
	free(order);
	free(list.targets.items);
	if (ret) {
		free(list.entries);
		return ret;
	}
	qsort(tables->subjects, tables->n_subjects, sizeof(*tables->subjects),
	      velo_pol_subject_cmp);
	if (list.n)
		qsort(list.entries, list.n, sizeof(*list.entries), cmp_entry);
	tables->tier_rules = list.entries;
	tables->n_tier_rules = resolve(list.entries, list.n);
	for (unsigned i = 0; i < tables->n_placed; i++) {
		const struct velo_pol_subject_entry *subject =
			velo_pol_tables_subject(tables, tables->placed[i].id);

		tables->placed[i].isolate = subject ? subject->value.flags : 0;
	}
	tables->active = tables->n_subjects > 0;
	return 0;
}
