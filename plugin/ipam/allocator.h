/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velo's IPAM: one address per range set from the sets' allocation files
 * (<dataDir>/<network>/<subnet>), each lease owned by container id and
 * ifname. Every failure records its CNI error.
 */
#ifndef VELO_IPAM_ALLOCATOR_H
#define VELO_IPAM_ALLOCATOR_H

#include <stdbool.h>

#include "base/addr.h"
#include "ipam/range.h"

struct ipam_owner {
	const char *network;
	const char *container_id;
	const char *ifname;
};

struct ipam_lease {
	const struct ipam_range *range; /* into the conf */
	int family;
	uint8_t addr[16];
};

/* How long a busy allocation file is waited for before code 11. */
#define IPAM_LOCK_TIMEOUT_MS 10000U

/*
 * Leases one address of each range set (in order; the first range of a set
 * with a free address gives it) into leases[conf->n_sets]. All or nothing:
 * exhaustion (code 101, naming the set's ranges) releases what was taken.
 */
int ipam_allocate(const struct ipam_conf *conf, const struct ipam_owner *owner,
		  struct ipam_lease *leases);
/*
 * Releases owner's leases. With known addresses (the endpoint record's, n > 0)
 * it looks at just those slots; without, it searches every range. Never
 * releases another owner's lease; nothing to release is success.
 */
int ipam_release(const struct ipam_conf *conf, const struct ipam_owner *owner,
		 const struct velo_ip *known, unsigned n_known);
/* 0 when each address is leased to owner; -ENOENT (code 101 naming the address) otherwise. */
int ipam_verify(const struct ipam_conf *conf, const struct ipam_owner *owner,
		const struct velo_ip *ips, unsigned n_ips);
/* Releases every lease of network for which keep() is false; the count released into *n. */
int ipam_sweep(const struct ipam_conf *conf, const char *network,
	       bool (*keep)(const char *container_id, const char *ifname, void *ctx), void *ctx,
	       unsigned *n);

#endif
