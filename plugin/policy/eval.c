// SPDX-License-Identifier: Apache-2.0
/* The datapath's verdict from the tables (eval.h). */
#include <arpa/inet.h>
#include <string.h>

#include "policy/cidr.h"
#include "policy/eval.h"

const struct velo_pol_ip_entry *velo_pol_lookup_ip(const struct velo_pol_tables *tables,
						   const struct velo_pol_cidr *addr)
{
	const struct velo_pol_ip_entry *best = NULL;
	struct velo_pol_ip_key key;

	velo_pol_cidr_key(addr, &key);
	for (unsigned i = 0; i < tables->n_ips; i++) {
		const struct velo_pol_ip_entry *entry = &tables->ips[i];

		if (entry->key.prefixlen <= key.prefixlen &&
		    (!best || entry->key.prefixlen > best->key.prefixlen) &&
		    velo_pol_bits_equal(entry->key.addr, key.addr, entry->key.prefixlen))
			best = entry;
	}
	return best;
}

/* The longest rule of (subject, peer, dir) covering proto/port, or NULL. */
static const struct velo_pol_rule_entry *lookup_rule(const struct velo_pol_tables *tables,
						     __u32 subject, __u32 peer, __u8 dir,
						     uint8_t proto, uint16_t port)
{
	struct velo_pol_rule_key key = { .prefixlen = 96,
					 .subject = subject,
					 .peer = peer,
					 .dir = dir,
					 .proto = proto,
					 .port = htons(port) };
	const struct velo_pol_rule_entry *best = NULL;
	unsigned lo = 0, hi = tables->n_rules;
	struct velo_pol_rule_key first = { .subject = subject, .peer = peer, .dir = dir };

	/* The first entry of (subject, peer, dir): the lowest proto, port and length. */
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (velo_pol_rule_cmp(&tables->rules[mid].key, &first) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (unsigned i = lo; i < tables->n_rules; i++) {
		const struct velo_pol_rule_entry *entry = &tables->rules[i];

		if (entry->key.subject != subject || entry->key.peer != peer ||
		    entry->key.dir != dir)
			break;
		if ((!best || entry->key.prefixlen > best->key.prefixlen) &&
		    velo_pol_rule_key_covers(&entry->key, &key))
			best = entry;
	}
	return best;
}

bool velo_pol_rule_allows(const struct velo_pol_tables *tables, __u32 subject, __u8 dir,
			  const struct velo_pol_ip *peer, uint8_t proto, uint16_t port,
			  const struct velo_pol_rule_entry **rule)
{
	const __u32 peers[] = { peer->pod_id, peer->cidr_id, VELO_ID_ANY };
	const struct velo_pol_rule_entry *found = NULL;

	for (unsigned i = 0; !found && i < sizeof(peers) / sizeof(peers[0]); i++)
		if (peers[i] != VELO_ID_NONE)
			found = lookup_rule(tables, subject, peers[i], dir, proto, port);
	if (rule)
		*rule = found;
	return found != NULL;
}

/* The longest tier entry of (subject, peer, dir) covering proto/port, or NULL. */
static const struct velo_pol_tier_entry *lookup_tier(const struct velo_pol_tables *tables,
						     __u32 subject, __u32 peer, __u8 dir,
						     uint8_t proto, uint16_t port)
{
	struct velo_pol_rule_key key = { .prefixlen = 96,
					 .subject = subject,
					 .peer = peer,
					 .dir = dir,
					 .proto = proto,
					 .port = htons(port) };
	const struct velo_pol_tier_entry *best = NULL;

	for (unsigned i = 0; i < tables->n_tier_rules; i++) {
		const struct velo_pol_tier_entry *entry = &tables->tier_rules[i];

		if ((!best || entry->key.prefixlen > best->key.prefixlen) &&
		    velo_pol_rule_key_covers(&entry->key, &key))
			best = entry;
	}
	return best;
}

const struct velo_pol_tier_rule *velo_pol_tier_first(const struct velo_pol_tables *tables,
						     __u32 subject, __u8 dir,
						     const struct velo_pol_ip *peer, uint8_t proto,
						     uint16_t port)
{
	const __u32 peers[] = { peer->pod_id, peer->cidr_id, VELO_ID_ANY };
	const struct velo_pol_tier_rule *first = NULL;

	for (unsigned i = 0; i < sizeof(peers) / sizeof(peers[0]); i++) {
		const struct velo_pol_tier_entry *found =
			peers[i] == VELO_ID_NONE
				? NULL
				: lookup_tier(tables, subject, peers[i], dir, proto, port);

		if (found && (!first || found->value.rank < first->rank))
			first = &found->value;
	}
	return first;
}

/* The subject entry's flags of a pod of this node, or 0. */
static __u32 isolation(const struct velo_pol_tables *tables, const struct velo_pol_ip *entry)
{
	const struct velo_pol_subject_entry *subject;

	if (!(entry->flags & VELO_POL_IP_LOCAL) || entry->pod_id < VELO_ID_POD_FIRST)
		return 0;
	subject = velo_pol_tables_subject(tables, entry->pod_id);
	return subject ? subject->value.flags : 0;
}

/* A tier's first matching rule's action for self's traffic with peer, or 0. */
static __u8 tier_action(const struct velo_pol_tables *tables, const struct velo_pol_ip *self,
			const struct velo_pol_ip *peer, __u8 dir, uint8_t proto, uint16_t port)
{
	const struct velo_pol_tier_rule *first =
		velo_pol_tier_first(tables, self->pod_id, dir, peer, proto, port);

	return first ? first->action : 0;
}

/*
 * What bpf/lib/policy.h's velo_pol_side_allows says: the Admin tier, then
 * NetworkPolicy, then the Baseline tier; this node's addresses are always let
 * in, and let out unless a tier decides.
 */
static bool side_allows(const struct velo_pol_tables *tables, const struct velo_pol_ip *self,
			const struct velo_pol_ip *peer, __u8 dir, uint8_t proto, uint16_t port)
{
	bool ingress = dir == VELO_POL_DIR_INGRESS;
	__u32 flags = isolation(tables, self);
	__u8 action;

	if (!flags || (peer->pod_id == VELO_ID_HOST && ingress))
		return true;
	if (flags & (ingress ? VELO_POL_ADMIN_INGRESS : VELO_POL_ADMIN_EGRESS)) {
		action = tier_action(tables, self, peer, VELO_POL_TIER_ADMIN | dir, proto, port);
		if (action == VELO_POL_ACTION_ACCEPT || action == VELO_POL_ACTION_DENY)
			return action == VELO_POL_ACTION_ACCEPT;
	}
	if (peer->pod_id == VELO_ID_HOST)
		return true;
	if (flags & (ingress ? VELO_POL_ISOLATE_INGRESS : VELO_POL_ISOLATE_EGRESS))
		return velo_pol_rule_allows(tables, self->pod_id, dir, peer, proto, port, NULL);
	if (flags & (ingress ? VELO_POL_BASELINE_INGRESS : VELO_POL_BASELINE_EGRESS))
		return tier_action(tables, self, peer, VELO_POL_TIER_BASELINE | dir, proto, port) !=
		       VELO_POL_ACTION_DENY;
	return true;
}

int velo_pol_verdict(const struct velo_pol_tables *tables, const struct velo_pol_cidr *src,
		     const struct velo_pol_cidr *dst, uint8_t proto, uint16_t dport)
{
	const struct velo_pol_ip_entry *from = velo_pol_lookup_ip(tables, src);
	const struct velo_pol_ip_entry *to = velo_pol_lookup_ip(tables, dst);
	static const struct velo_pol_ip world = { .cidr_id = VELO_ID_WORLD };
	const struct velo_pol_ip *s = from ? &from->value : &world, *d = to ? &to->value : &world;

	if (!(d->flags & VELO_POL_IP_SERVICE) &&
	    !side_allows(tables, s, d, VELO_POL_DIR_EGRESS, proto, dport))
		return VELO_POL_DROP_EGRESS;
	if (!side_allows(tables, d, s, VELO_POL_DIR_INGRESS, proto, dport))
		return VELO_POL_DROP_INGRESS;
	return 0;
}

bool velo_pol_allowed(const struct velo_pol_tables *tables, const struct velo_pol_cidr *src,
		      const struct velo_pol_cidr *dst, uint8_t proto, uint16_t dport)
{
	return velo_pol_verdict(tables, src, dst, proto, dport) == 0;
}
