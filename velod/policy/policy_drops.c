// SPDX-License-Identifier: Apache-2.0
/* velo_pol_drop_v1's counters of gone pods removed (policy_drops.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/lib/velo_policy.h"
#include "policy/cidr.h"
#include "policy_drops.h"

static bool local_addr(const struct velo_pol_local_pod *local, unsigned n_local,
		       const __u8 addr[16])
{
	static const __u8 none[16];

	if (!memcmp(addr, none, 16))
		return true; /* drops before any pod was known: one entry */
	for (unsigned i = 0; i < n_local; i++)
		for (unsigned a = 0; a < local[i].n_ips; a++) {
			struct velo_pol_ip_key key;

			velo_pol_cidr_key(&local[i].ips[a], &key);
			if (!memcmp(key.addr, addr, 16))
				return true;
		}
	return false;
}

unsigned policy_drops_prune(const struct velo_policy_bpf *bpf,
			    const struct velo_pol_local_pod *local, unsigned n_local)
{
	struct velo_pol_drop_key key, prev, *gone = NULL;
	unsigned n = 0, cap = 0, removed = 0;
	bool first = true;

	/* Collected first: a delete during the walk would restart it. */
	while (!bpf_map_get_next_key(bpf->drop_fd, first ? NULL : &prev, &key)) {
		prev = key;
		first = false;
		if (local_addr(local, n_local, key.addr))
			continue;
		if (n == cap) {
			struct velo_pol_drop_key *grown =
				realloc(gone, (cap = cap ? cap * 2 : 64) * sizeof(*gone));

			if (!grown)
				break;
			gone = grown;
		}
		gone[n++] = key;
		if (n >= 1u << 20)
			break; /* a walk restarted by concurrent deletes can't go on forever */
	}
	for (unsigned i = 0; i < n; i++)
		removed += !bpf_map_delete_elem(bpf->drop_fd, &gone[i]);
	free(gone);
	return removed;
}
