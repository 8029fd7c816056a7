// SPDX-License-Identifier: Apache-2.0
/* NetworkPolicy's verdict from userspace, and the sockmap pairs a change forbids. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <arpa/inet.h>

#include <bpf/bpf.h>

#include "bpf/lib/velo_policy.h"
#include "bpf/lib/velo_sockmap.h"
#include "datapath/policy_judge.h"

#define IPPROTO_TCP_NUM 6
/* Linux's default ip_local_port_range starts here: connect()'s ports, not listeners'. */
#define EPHEMERAL_FIRST 32768

/* A full-length LPM lookup: the longest prefix holding addr. False when none does. */
static bool ip_of(const struct velo_policy_bpf *bpf, const uint8_t addr[16], struct velo_pol_ip *ip)
{
	struct velo_pol_ip_key key = { .prefixlen = 128 };

	memcpy(key.addr, addr, 16);
	return !bpf_map_lookup_elem(bpf->ip_fd, &key, ip);
}

static bool local_pod(const struct velo_pol_ip *ip)
{
	return (ip->flags & VELO_POL_IP_LOCAL) && ip->pod_id >= VELO_ID_POD_FIRST;
}

/* lib/policy.h's velo_pol_rule_key_of: a flow's key in the rule and tier maps (dport as sent). */
static struct velo_pol_rule_key key_of(uint32_t subject, uint32_t peer, uint8_t dir, uint8_t proto,
				       uint16_t dport)
{
	struct velo_pol_rule_key key = {
		.prefixlen = VELO_POL_RULE_PREFIX_BASE + 24,
		.subject = subject,
		.peer = peer,
		.dir = dir,
		.proto = proto,
		.port = dport,
	};

	return key;
}

static bool rule(const struct velo_policy_bpf *bpf, uint32_t subject, uint32_t peer, uint8_t dir,
		 uint8_t proto, uint16_t dport)
{
	struct velo_pol_rule_key key = key_of(subject, peer, dir, proto, dport);
	struct velo_pol_rule value;

	return !bpf_map_lookup_elem(bpf->rule_fd, &key, &value);
}

/* lib/policy.h's velo_pol_tier_first: the tier's first matching rule's action, or 0. */
static uint8_t tier_action(const struct velo_policy_bpf *bpf, uint32_t subject, uint32_t pod_id,
			   uint32_t cidr_id, uint8_t dir, uint8_t proto, uint16_t dport)
{
	const uint32_t peers[] = { pod_id, cidr_id, VELO_ID_ANY };
	struct velo_pol_tier_rule best = {}, value;
	bool found = false;

	for (unsigned i = 0; i < sizeof(peers) / sizeof(peers[0]); i++) {
		struct velo_pol_rule_key key = key_of(subject, peers[i], dir, proto, dport);

		if (peers[i] == VELO_ID_NONE || bpf_map_lookup_elem(bpf->tier_fd, &key, &value))
			continue;
		if (!found || value.rank < best.rank)
			best = value;
		found = true;
	}
	return found ? best.action : 0;
}

/* lib/policy.h's velo_pol_side_allows. */
static bool side_allows(const struct velo_policy_bpf *bpf, const struct velo_pol_ip *self,
			const struct velo_pol_ip *peer, uint8_t dir, uint8_t proto, uint16_t dport)
{
	bool ingress = dir == VELO_POL_DIR_INGRESS;
	uint32_t pod_id = peer ? peer->pod_id : VELO_ID_NONE;
	uint32_t cidr_id = peer ? peer->cidr_id : VELO_ID_WORLD;
	struct velo_pol_subject subject;
	uint8_t action;

	if (bpf_map_lookup_elem(bpf->subject_fd, &self->pod_id, &subject))
		return true;
	if (pod_id == VELO_ID_HOST && ingress)
		return true;
	if (subject.flags & (ingress ? VELO_POL_ADMIN_INGRESS : VELO_POL_ADMIN_EGRESS)) {
		action = tier_action(bpf, self->pod_id, pod_id, cidr_id, VELO_POL_TIER_ADMIN | dir,
				     proto, dport);
		if (action == VELO_POL_ACTION_ACCEPT || action == VELO_POL_ACTION_DENY)
			return action == VELO_POL_ACTION_ACCEPT;
	}
	if (pod_id == VELO_ID_HOST)
		return true;
	if (subject.flags & (ingress ? VELO_POL_ISOLATE_INGRESS : VELO_POL_ISOLATE_EGRESS)) {
		if (pod_id != VELO_ID_NONE && rule(bpf, self->pod_id, pod_id, dir, proto, dport))
			return true;
		return rule(bpf, self->pod_id, cidr_id, dir, proto, dport) ||
		       rule(bpf, self->pod_id, VELO_ID_ANY, dir, proto, dport);
	}
	if (subject.flags & (ingress ? VELO_POL_BASELINE_INGRESS : VELO_POL_BASELINE_EGRESS))
		return tier_action(bpf, self->pod_id, pod_id, cidr_id, VELO_POL_TIER_BASELINE | dir,
				   proto, dport) != VELO_POL_ACTION_DENY;
	return true;
}

int velo_policy_judge(const struct velo_policy_bpf *bpf, const uint8_t src[16],
		      const uint8_t dst[16], uint8_t proto, uint16_t dport)
{
	struct velo_pol_ip src_ip, dst_ip;
	bool have_src = ip_of(bpf, src, &src_ip), have_dst = ip_of(bpf, dst, &dst_ip);

	if (have_src && local_pod(&src_ip) && !(have_dst && (dst_ip.flags & VELO_POL_IP_SERVICE)) &&
	    !side_allows(bpf, &src_ip, have_dst ? &dst_ip : NULL, VELO_POL_DIR_EGRESS, proto,
			 dport))
		return VELO_POL_DROP_EGRESS;
	if (have_dst && local_pod(&dst_ip) &&
	    !side_allows(bpf, &dst_ip, have_src ? &src_ip : NULL, VELO_POL_DIR_INGRESS, proto,
			 dport))
		return VELO_POL_DROP_INGRESS;
	return 0;
}

/* The flow table's entry for this tuple exists: the connection was opened this way round. */
static bool opened_as(const struct velo_policy_bpf *bpf, const uint8_t src[16], uint32_t sport,
		      const uint8_t dst[16], uint32_t dport)
{
	struct velo_pol_ct_key key = { .proto = IPPROTO_TCP_NUM };
	struct velo_pol_ct value;

	memcpy(key.saddr, src, 16);
	memcpy(key.daddr, dst, 16);
	key.sport = htons((uint16_t)sport);
	key.dport = htons((uint16_t)dport);
	return !bpf_map_lookup_elem(bpf->ct_fd, &key, &value);
}

/*
 * The socket's connection judged the way it was opened, as the flow table
 * remembers it; without an entry (paired before any policy program saw it),
 * by its ephemeral port, else it must be allowed both ways round.
 */
static bool pair_allowed(const struct velo_policy_bpf *bpf, const struct velo_sm_key *key)
{
	bool out = opened_as(bpf, key->local, key->local_port, key->remote, key->remote_port);
	bool in = opened_as(bpf, key->remote, key->remote_port, key->local, key->local_port);
	bool out_ok = !velo_policy_judge(bpf, key->local, key->remote, IPPROTO_TCP_NUM,
					 htons((uint16_t)key->remote_port));
	bool in_ok = !velo_policy_judge(bpf, key->remote, key->local, IPPROTO_TCP_NUM,
					htons((uint16_t)key->local_port));

	if (out != in)
		return out ? out_ok : in_ok;
	/* No entry (paired before policy came): the end with an ephemeral port opened it. */
	if ((key->local_port >= EPHEMERAL_FIRST) != (key->remote_port >= EPHEMERAL_FIRST))
		return key->local_port >= EPHEMERAL_FIRST ? out_ok : in_ok;
	return out_ok && in_ok;
}

int velo_policy_unpair_denied(const struct velo_policy_bpf *bpf, int sockhash_fd)
{
	struct velo_sm_key batch[64], key, next;
	int removed = 0;
	unsigned n;

	/* The hash can't be walked while it changes: collect a batch, delete it, start over. */
	do {
		void *prev = NULL;

		n = 0;
		while (n < sizeof(batch) / sizeof(batch[0]) &&
		       !bpf_map_get_next_key(sockhash_fd, prev, &next)) {
			key = next;
			prev = &key;
			if (!pair_allowed(bpf, &key))
				batch[n++] = key;
		}
		for (unsigned i = 0; i < n; i++) {
			if (!bpf_map_delete_elem(sockhash_fd, &batch[i]))
				removed++;
			else if (errno != ENOENT)
				return -errno;
		}
	} while (n == sizeof(batch) / sizeof(batch[0]));
	return removed;
}
