// SPDX-License-Identifier: Apache-2.0
/* The policy tables' orders, lookups and release (table.h). */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "policy/table.h"

void velo_pol_tables_free(struct velo_pol_tables *tables)
{
	free(tables->ips);
	free(tables->subjects);
	free(tables->rules);
	free(tables->tier_rules);
	free(tables->identities);
	free(tables->placed);
	memset(tables, 0, sizeof(*tables));
}

void velo_pol_numbering_free(struct velo_pol_numbering *numbering)
{
	velo_pol_ids_free(&numbering->pods);
	velo_pol_ids_free(&numbering->cidrs);
	velo_pol_ids_free(&numbering->policies);
	numbering->ready = false;
}

int velo_pol_id_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

int velo_pol_subject_cmp(const void *a, const void *b)
{
	return velo_pol_id_cmp(a, b);
}

int velo_pol_ip_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct velo_pol_ip_key));
}

static int cmp_u32(__u32 x, __u32 y)
{
	return x < y ? -1 : x > y;
}

int velo_pol_rule_cmp(const void *a, const void *b)
{
	const struct velo_pol_rule_key *x = a, *y = b;
	int cmp = cmp_u32(x->subject, y->subject);

	if (!cmp)
		cmp = cmp_u32(x->peer, y->peer);
	if (!cmp)
		cmp = cmp_u32(x->dir, y->dir);
	if (!cmp)
		cmp = cmp_u32(x->proto, y->proto);
	if (!cmp)
		cmp = cmp_u32(ntohs(x->port), ntohs(y->port));
	if (!cmp)
		cmp = cmp_u32(x->prefixlen, y->prefixlen);
	return cmp;
}

void velo_pol_rule_key_init(struct velo_pol_rule_key *key, __u32 subject, __u32 peer, __u8 dir,
			    __u8 proto, uint16_t port, unsigned port_bits)
{
	memset(key, 0, sizeof(*key));
	key->subject = subject;
	key->peer = peer;
	key->dir = dir;
	key->proto = proto;
	key->port = htons(port);
	key->prefixlen = VELO_POL_RULE_PREFIX_BASE + (proto ? 8 + port_bits : 0);
}

bool velo_pol_bits_equal(const __u8 *a, const __u8 *b, unsigned prefixlen)
{
	unsigned bytes = prefixlen / 8, bits = prefixlen % 8;

	if (memcmp(a, b, bytes))
		return false;
	return !bits || !((a[bytes] ^ b[bytes]) & (0xff00 >> bits));
}

bool velo_pol_rule_key_covers(const struct velo_pol_rule_key *outer,
			      const struct velo_pol_rule_key *inner)
{
	/* The key after prefixlen as the trie compares it: bytes in order. */
	return outer->prefixlen <= inner->prefixlen &&
	       velo_pol_bits_equal((const __u8 *)&outer->subject, (const __u8 *)&inner->subject,
				   outer->prefixlen);
}

const struct velo_pol_subject_entry *velo_pol_tables_subject(const struct velo_pol_tables *tables,
							     __u32 id)
{
	struct velo_pol_subject_entry probe = { .id = id };

	return bsearch(&probe, tables->subjects, tables->n_subjects, sizeof(probe),
		       velo_pol_id_cmp);
}

const struct velo_pol_identity *velo_pol_tables_identity(const struct velo_pol_tables *tables,
							 __u32 id)
{
	struct velo_pol_identity probe = { .id = id };

	return bsearch(&probe, tables->identities, tables->n_identities, sizeof(probe),
		       velo_pol_id_cmp);
}

const struct velo_pol_placed *velo_pol_tables_placed(const struct velo_pol_tables *tables,
						     const char *ns, const char *name)
{
	for (unsigned i = 0; i < tables->n_placed; i++)
		if (!strcmp(tables->placed[i].ns, ns) && !strcmp(tables->placed[i].name, name))
			return &tables->placed[i];
	return NULL;
}

const char *velo_pol_policy_name(const struct velo_pol_numbering *numbering, __u32 id)
{
	for (unsigned i = 0; i < numbering->policies.n; i++)
		if (numbering->policies.items[i].id == id)
			return numbering->policies.items[i].key;
	return NULL;
}
