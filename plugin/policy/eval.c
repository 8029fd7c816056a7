// SPDX-License-Identifier: Apache-2.0
/* The datapath's verdict from the tables (eval.h). */
#include <arpa/inet.h>
#include <string.h>

#include "policy/cidr.h"
#include "policy/eval.h"

/* The first prefixlen bits of a and b agree. */
static bool bits_equal(const __u8 *a, const __u8 *b, unsigned prefixlen)
{
	unsigned bytes = prefixlen / 8, bits = prefixlen % 8;

	if (memcmp(a, b, bytes))
		return false;
	return !bits || !((a[bytes] ^ b[bytes]) & (0xff00 >> bits));
}

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
		    bits_equal(entry->key.addr, key.addr, entry->key.prefixlen))
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
		/* The key after prefixlen as the trie compares it: bytes in order. */
		if ((!best || entry->key.prefixlen > best->key.prefixlen) &&
		    bits_equal((const __u8 *)&entry->key.subject, (const __u8 *)&key.subject,
			       entry->key.prefixlen))
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

/* The subject entry's isolation flags of a pod of this node, or 0. */
static __u32 isolation(const struct velo_pol_tables *tables, const struct velo_pol_ip *entry)
{
	const struct velo_pol_subject_entry *subject;

	if (!(entry->flags & VELO_POL_IP_LOCAL) || entry->pod_id < VELO_ID_POD_FIRST)
		return 0;
	subject = velo_pol_tables_subject(tables, entry->pod_id);
	return subject ? subject->value.flags : 0;
}

int velo_pol_verdict(const struct velo_pol_tables *tables, const struct velo_pol_cidr *src,
		     const struct velo_pol_cidr *dst, uint8_t proto, uint16_t dport)
{
	const struct velo_pol_ip_entry *from = velo_pol_lookup_ip(tables, src);
	const struct velo_pol_ip_entry *to = velo_pol_lookup_ip(tables, dst);
	static const struct velo_pol_ip world = { .cidr_id = VELO_ID_WORLD };
	const struct velo_pol_ip *s = from ? &from->value : &world, *d = to ? &to->value : &world;

	if ((isolation(tables, s) & VELO_POL_ISOLATE_EGRESS) && !(d->flags & VELO_POL_IP_SERVICE) &&
	    d->pod_id != VELO_ID_HOST &&
	    !velo_pol_rule_allows(tables, s->pod_id, VELO_POL_DIR_EGRESS, d, proto, dport, NULL))
		return VELO_POL_DROP_EGRESS;
	if ((isolation(tables, d) & VELO_POL_ISOLATE_INGRESS) && s->pod_id != VELO_ID_HOST &&
	    !velo_pol_rule_allows(tables, d->pod_id, VELO_POL_DIR_INGRESS, s, proto, dport, NULL))
		return VELO_POL_DROP_INGRESS;
	return 0;
}

bool velo_pol_allowed(const struct velo_pol_tables *tables, const struct velo_pol_cidr *src,
		      const struct velo_pol_cidr *dst, uint8_t proto, uint16_t dport)
{
	return velo_pol_verdict(tables, src, dst, proto, dport) == 0;
}
