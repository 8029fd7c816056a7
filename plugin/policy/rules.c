// SPDX-License-Identifier: Apache-2.0
/*
 * Subjects and rules (rules.h). A rule's peers become identities: the
 * pod identities its selectors match, the ipBlock prefixes inside its cidr
 * and outside its excepts (an address's prefix identity is the longest
 * prefix holding it, so that is exactly cidr minus except), or VELO_ID_ANY
 * without peers. Its ports become key prefixes: a number in full, a range
 * as its prefix cover, a protocol alone +8 bits, no ports the base length.
 * A named port resolves to numbers per pod: the subject's own for ingress,
 * each peer pod's for egress (one entry per peer identity then); a name a
 * pod repeats across containers allows each of its numbers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cidr.h"
#include "policy/ports.h"
#include "policy/rules.h"
#include "policy/selector.h"

struct rule_list {
	const struct velo_pol_build *build;
	struct velo_pol_rule_entry *entries;
	unsigned n, cap;
	struct velo_pol_targets targets; /* one rule's peers, reused */
};

bool velo_pol_netpol_selects(const struct velo_pol_netpol *netpol, const struct velo_pol_pod *pod)
{
	return !strcmp(netpol->ns, pod->ns) &&
	       velo_pol_selector_match(&netpol->subject, &pod->labels);
}

static int add(struct rule_list *list, __u32 subject, __u32 peer, __u8 dir, __u8 proto,
	       uint16_t port, unsigned port_bits, __u32 policy)
{
	struct velo_pol_rule_entry *entry;

	if (velo_pol_grow((void **)&list->entries, list->n, &list->cap, sizeof(*entry)))
		return -ENOMEM;
	entry = &list->entries[list->n++];
	velo_pol_rule_key_init(&entry->key, subject, peer, dir, proto, port, port_bits);
	entry->value.policy = policy;
	return 0;
}

static bool in_block(const struct velo_pol_peer *peer, const struct velo_pol_cidr *prefix)
{
	if (!velo_pol_cidr_inside(prefix, &peer->block))
		return false;
	for (unsigned e = 0; e < peer->n_except; e++)
		if (velo_pol_cidr_inside(prefix, &peer->except[e]))
			return false;
	return true;
}

/* The rule's peers as identities into list->targets. */
static int expand_peers(struct rule_list *list, const struct velo_pol_netpol *netpol,
			const struct velo_pol_np_rule *rule)
{
	const struct velo_pol_build *build = list->build;

	list->targets.n = 0;
	if (!rule->n_peers)
		return velo_pol_targets_add(&list->targets, VELO_ID_ANY, NULL);
	for (unsigned p = 0; p < rule->n_peers; p++) {
		const struct velo_pol_peer *peer = &rule->peers[p];

		for (unsigned i = 0; peer->has_block && i < build->n_prefixes; i++)
			if (in_block(peer, &build->prefixes[i].cidr) &&
			    velo_pol_targets_add(&list->targets, build->prefixes[i].id, NULL))
				return -ENOMEM;
		for (unsigned i = 0; !peer->has_block && i < build->n_idents; i++) {
			const struct velo_pol_ident *ident = &build->idents[i];
			struct velo_pol_label spare_label;
			struct velo_pol_labels spare;

			if (velo_pol_peer_selects(
				    peer, netpol->ns, ident->pod->ns, &ident->pod->labels,
				    velo_pol_ident_ns_labels(ident, &spare, &spare_label)) &&
			    velo_pol_targets_add(&list->targets, ident->id, ident))
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The numbers a pod gives a port name for proto: its ports are sorted by
 * name, protocol and number, so they are *n in a row from the one returned
 * (NULL, *n 0: none). A name repeated across containers (the API warns but
 * allows it) names each of its numbers, and a rule naming it allows each.
 */
static const struct velo_pol_named_port *named_ports(const struct velo_pol_pod *pod,
						     const char *name, uint8_t proto, unsigned *n)
{
	const struct velo_pol_named_port *first = NULL;

	*n = 0;
	for (unsigned i = 0; i < pod->n_ports; i++) {
		if (strcmp(pod->ports[i].name, name) || pod->ports[i].proto != proto)
			continue;
		if (!first)
			first = &pod->ports[i];
		(*n)++;
	}
	return first;
}

/* A named port of pod to one peer identity: one entry per number. */
static int add_named(struct rule_list *list, __u32 subject, __u32 peer, __u8 dir,
		     const struct velo_pol_pod *pod, const struct velo_pol_port *port, __u32 policy)
{
	unsigned n;
	const struct velo_pol_named_port *numbers = named_ports(pod, port->name, port->proto, &n);

	for (unsigned i = 0; i < n; i++)
		if (add(list, subject, peer, dir, port->proto, numbers[i].port, 16, policy))
			return -ENOMEM;
	return 0;
}

/* An egress named port to one peer: every pod identity naming it when the peer is any. */
static int add_egress_named(struct rule_list *list, __u32 subject,
			    const struct velo_pol_target *target, const struct velo_pol_port *port,
			    __u32 policy)
{
	const struct velo_pol_build *build = list->build;

	if (target->id != VELO_ID_ANY)
		return target->ident ? add_named(list, subject, target->id, VELO_POL_DIR_EGRESS,
						 target->ident->pod, port, policy)
				     : 0;
	for (unsigned i = 0; i < build->n_idents; i++)
		if (add_named(list, subject, build->idents[i].id, VELO_POL_DIR_EGRESS,
			      build->idents[i].pod, port, policy))
			return -ENOMEM;
	return 0;
}

/* One port of a rule, for every target. */
static int add_port(struct rule_list *list, const struct velo_pol_ident *subject, __u8 dir,
		    const struct velo_pol_port *port, __u32 policy)
{
	struct velo_pol_port_prefix cover[VELO_POL_PORT_PREFIXES_MAX];
	unsigned n_cover;

	if (port->name[0]) {
		/* Egress: each peer pod's numbers; ingress: the subject's own. */
		for (unsigned t = 0; t < list->targets.n; t++)
			if (dir == VELO_POL_DIR_EGRESS
				    ? add_egress_named(list, subject->id, &list->targets.items[t],
						       port, policy)
				    : add_named(list, subject->id, list->targets.items[t].id, dir,
						subject->pod, port, policy))
				return -ENOMEM;
		return 0; /* a name the pod doesn't have allows nothing */
	}
	n_cover = velo_pol_port_prefixes(port, cover);
	for (unsigned t = 0; t < list->targets.n; t++)
		for (unsigned c = 0; c < n_cover; c++)
			if (add(list, subject->id, list->targets.items[t].id, dir, port->proto,
				cover[c].port, cover[c].len, policy))
				return -ENOMEM;
	return 0;
}

static int add_rules(struct rule_list *list, const struct velo_pol_ident *subject, __u8 dir,
		     const struct velo_pol_netpol *netpol, __u32 policy)
{
	const struct velo_pol_np_rule *rules =
		dir == VELO_POL_DIR_INGRESS ? netpol->ingress_rules : netpol->egress_rules;
	unsigned n = dir == VELO_POL_DIR_INGRESS ? netpol->n_ingress : netpol->n_egress;

	for (unsigned r = 0; r < n; r++) {
		if (expand_peers(list, netpol, &rules[r]))
			return -ENOMEM;
		for (unsigned t = 0; !rules[r].n_ports && t < list->targets.n; t++)
			if (add(list, subject->id, list->targets.items[t].id, dir, 0, 0, 0, policy))
				return -ENOMEM;
		for (unsigned p = 0; p < rules[r].n_ports; p++)
			if (add_port(list, subject, dir, &rules[r].ports[p], policy))
				return -ENOMEM;
	}
	return 0;
}

/* Key order; among equal keys the lowest policy number first (the one kept). */
static int cmp_entry(const void *a, const void *b)
{
	const struct velo_pol_rule_entry *x = a, *y = b;
	int cmp = velo_pol_rule_cmp(&x->key, &y->key);

	return cmp				   ? cmp
	       : x->value.policy < y->value.policy ? -1
						   : x->value.policy > y->value.policy;
}

int velo_pol_rules_build(const struct velo_pol_build *build, struct velo_pol_tables *tables)
{
	const struct velo_pol_objects *objects = build->objects;
	struct rule_list list = { .build = build };
	unsigned n_subjects = 0, n = 0;
	int ret = 0;

	tables->subjects = calloc(build->n_idents + 1, sizeof(*tables->subjects));
	if (!tables->subjects)
		return -ENOMEM;
	for (unsigned i = 0; !ret && i < build->n_idents; i++) {
		const struct velo_pol_ident *ident = &build->idents[i];
		__u32 isolate = 0;

		if (!ident->local)
			continue;
		for (unsigned p = 0; !ret && p < objects->n_netpols; p++) {
			const struct velo_pol_netpol *netpol = &objects->netpols[p];

			if (!velo_pol_netpol_selects(netpol, ident->pod))
				continue;
			if (velo_pol_build_audits(ident, netpol->audit)) {
				build->audited[i] = true;
				if (!build->shadow)
					continue;
			}
			if (netpol->ingress) {
				isolate |= VELO_POL_ISOLATE_INGRESS;
				ret = add_rules(&list, ident, VELO_POL_DIR_INGRESS, netpol,
						build->policy_ids[p]);
			}
			if (!ret && netpol->egress) {
				isolate |= VELO_POL_ISOLATE_EGRESS;
				ret = add_rules(&list, ident, VELO_POL_DIR_EGRESS, netpol,
						build->policy_ids[p]);
			}
		}
		if (isolate)
			tables->subjects[n_subjects++] =
				(struct velo_pol_subject_entry){ ident->id, { isolate, 0 } };
	}
	free(list.targets.items);
	if (ret) {
		free(list.entries);
		return ret;
	}
	qsort(tables->subjects, n_subjects, sizeof(*tables->subjects), velo_pol_subject_cmp);
	if (list.n)
		qsort(list.entries, list.n, sizeof(*list.entries), cmp_entry);
	for (unsigned i = 0; i < list.n; i++)
		if (!n || velo_pol_rule_cmp(&list.entries[n - 1].key, &list.entries[i].key))
			list.entries[n++] = list.entries[i];
	tables->n_subjects = n_subjects;
	tables->rules = list.entries;
	tables->n_rules = n;
	for (unsigned i = 0; i < tables->n_placed; i++)
		if (velo_pol_tables_subject(tables, tables->placed[i].id))
			tables->placed[i].isolate =
				velo_pol_tables_subject(tables, tables->placed[i].id)->value.flags;
	tables->active = n_subjects > 0;
	return 0;
}
