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

/*
 * The longest entry of (subject, peer, dir) covering proto/port among n
 * entries of size bytes, each starting with its key and sorted by
 * velo_pol_rule_cmp (the rules' and the tiers' alike), or NULL.
 */
static const struct velo_pol_rule_key *key_at(const void *entries, size_t size, unsigned i)
{
	return (const struct velo_pol_rule_key *)((const char *)entries + (size_t)i * size);
}

static const void *lookup_longest(const void *entries, unsigned n, size_t size, __u32 subject,
				  __u32 peer, __u8 dir, uint8_t proto, uint16_t port)
{
	const struct velo_pol_rule_key *best = NULL;
	struct velo_pol_rule_key key, first = { .subject = subject, .peer = peer, .dir = dir };
	unsigned lo = 0, hi = n;

	/* A packet's key: its protocol and port in full, as the programs look it up. */
	velo_pol_rule_key_init(&key, subject, peer, dir, proto, port, 16);
	key.prefixlen = VELO_POL_RULE_PREFIX_BASE + 24;
	/* The first entry of (subject, peer, dir): the lowest proto, port and length. */
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (velo_pol_rule_cmp(key_at(entries, size, mid), &first) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (unsigned i = lo; i < n; i++) {
		const struct velo_pol_rule_key *entry = key_at(entries, size, i);

		if (entry->subject != subject || entry->peer != peer || entry->dir != dir)
			break;
		if ((!best || entry->prefixlen > best->prefixlen) &&
		    velo_pol_rule_key_covers(entry, &key))
			best = entry;
	}
	return best;
}

static const struct velo_pol_rule_entry *lookup_rule(const struct velo_pol_tables *tables,
						     __u32 subject, __u32 peer, __u8 dir,
						     uint8_t proto, uint16_t port)
{
	return lookup_longest(tables->rules, tables->n_rules, sizeof(*tables->rules), subject, peer,
			      dir, proto, port);
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

static const struct velo_pol_tier_entry *lookup_tier(const struct velo_pol_tables *tables,
						     __u32 subject, __u32 peer, __u8 dir,
						     uint8_t proto, uint16_t port)
{
	return lookup_longest(tables->tier_rules, tables->n_tier_rules, sizeof(*tables->tier_rules),
			      subject, peer, dir, proto, port);
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

/* why's decision: allowed or not, by what. */
static bool decide(struct velo_pol_side_why *why, enum velo_pol_decider by, bool allowed)
{
	why->by = by;
	why->allowed = allowed;
	return allowed;
}

/* The tier's first matching rule into why (its policy, rule, action); its action or 0. */
static __u8 tier_decides(const struct velo_pol_tables *tables, const struct velo_pol_ip *self,
			 const struct velo_pol_ip *peer, __u8 dir, uint8_t proto, uint16_t port,
			 struct velo_pol_side_why *why)
{
	const struct velo_pol_tier_rule *first =
		velo_pol_tier_first(tables, self->pod_id, dir, peer, proto, port);

	if (!first)
		return 0;
	why->policy = first->policy;
	why->rule = first->rule;
	why->action = first->action;
	return first->action;
}

/*
 * What bpf/lib/policy.h's velo_pol_side_allows says, and why: the Admin
 * tier, then NetworkPolicy, then the Baseline tier; this node's addresses
 * are always let in, and let out unless a tier decides.
 */
static bool side_allows(const struct velo_pol_tables *tables, const struct velo_pol_ip *self,
			const struct velo_pol_ip *peer, __u8 dir, uint8_t proto, uint16_t port,
			struct velo_pol_side_why *why)
{
	bool ingress = dir == VELO_POL_DIR_INGRESS;
	__u32 flags = isolation(tables, self);
	const struct velo_pol_rule_entry *rule;
	__u8 action;

	memset(why, 0, sizeof(*why));
	why->subject = flags ? self->pod_id : 0;
	if (!flags)
		return decide(why, VELO_POL_BY_NONE, true);
	if (peer->pod_id == VELO_ID_HOST && ingress)
		return decide(why, VELO_POL_BY_NODE, true);
	if (flags & (ingress ? VELO_POL_ADMIN_INGRESS : VELO_POL_ADMIN_EGRESS)) {
		action = tier_decides(tables, self, peer, VELO_POL_TIER_ADMIN | dir, proto, port,
				      why);
		if (action == VELO_POL_ACTION_ACCEPT || action == VELO_POL_ACTION_DENY)
			return decide(why, VELO_POL_BY_ADMIN, action == VELO_POL_ACTION_ACCEPT);
	}
	if (peer->pod_id == VELO_ID_HOST)
		return decide(why, VELO_POL_BY_NODE, true);
	if (flags & (ingress ? VELO_POL_ISOLATE_INGRESS : VELO_POL_ISOLATE_EGRESS)) {
		bool allowed =
			velo_pol_rule_allows(tables, self->pod_id, dir, peer, proto, port, &rule);

		why->policy = allowed ? rule->value.policy : 0;
		return decide(why, VELO_POL_BY_NETPOL, allowed);
	}
	if (flags & (ingress ? VELO_POL_BASELINE_INGRESS : VELO_POL_BASELINE_EGRESS)) {
		action = tier_decides(tables, self, peer, VELO_POL_TIER_BASELINE | dir, proto, port,
				      why);
		if (action)
			return decide(why, VELO_POL_BY_BASELINE, action != VELO_POL_ACTION_DENY);
	}
	return decide(why, VELO_POL_BY_DEFAULT, true);
}

int velo_pol_why(const struct velo_pol_tables *tables, const struct velo_pol_cidr *src,
		 const struct velo_pol_cidr *dst, uint8_t proto, uint16_t dport,
		 struct velo_pol_why *why)
{
	const struct velo_pol_ip_entry *from = velo_pol_lookup_ip(tables, src);
	const struct velo_pol_ip_entry *to = velo_pol_lookup_ip(tables, dst);
	static const struct velo_pol_ip world = { .cidr_id = VELO_ID_WORLD };
	const struct velo_pol_ip *s = from ? &from->value : &world, *d = to ? &to->value : &world;

	memset(why, 0, sizeof(*why));
	why->via_service = (d->flags & VELO_POL_IP_SERVICE) != 0;
	if (!why->via_service &&
	    !side_allows(tables, s, d, VELO_POL_DIR_EGRESS, proto, dport, &why->egress))
		return VELO_POL_DROP_EGRESS;
	if (why->via_service)
		why->egress =
			(struct velo_pol_side_why){ .by = VELO_POL_BY_SERVICE, .allowed = true };
	if (!side_allows(tables, d, s, VELO_POL_DIR_INGRESS, proto, dport, &why->ingress))
		return VELO_POL_DROP_INGRESS;
	return 0;
}

int velo_pol_verdict(const struct velo_pol_tables *tables, const struct velo_pol_cidr *src,
		     const struct velo_pol_cidr *dst, uint8_t proto, uint16_t dport)
{
	struct velo_pol_why why;

	return velo_pol_why(tables, src, dst, proto, dport, &why);
}

bool velo_pol_allowed(const struct velo_pol_tables *tables, const struct velo_pol_cidr *src,
		      const struct velo_pol_cidr *dst, uint8_t proto, uint16_t dport)
{
	return velo_pol_verdict(tables, src, dst, proto, dport) == 0;
}
