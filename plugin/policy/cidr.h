/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Prefixes as policy uses them (cidr.c): parsed, compared, and in the
 * form of velo_pol_ip_v1's keys (bpf/lib/velo_policy.h: IPv4 as
 * ::ffff:a.b.c.d, its prefix 96 longer).
 */
#ifndef VELO_POLICY_CIDR_H
#define VELO_POLICY_CIDR_H

#include <stdbool.h>
#include <stddef.h>

#include "bpf/lib/velo_policy.h"
#include "policy/objects.h"

/* "10.0.0.0/8" (host bits cleared, as the API server's net.ParseCIDR) or, with full, an address. */
int velo_pol_cidr_parse(const char *text, bool full, struct velo_pol_cidr *out);
/* inner lies inside outer: same family, at least as long, the same leading bits. */
bool velo_pol_cidr_inside(const struct velo_pol_cidr *inner, const struct velo_pol_cidr *outer);
/* The map key of a prefix, and back. */
void velo_pol_cidr_key(const struct velo_pol_cidr *cidr, struct velo_pol_ip_key *key);
void velo_pol_key_cidr(const struct velo_pol_ip_key *key, struct velo_pol_cidr *cidr);
/* "10.0.0.0/8", "fd00::/64"; an address without its length when full. */
const char *velo_pol_cidr_text(const struct velo_pol_cidr *cidr, char *buf, size_t len);

#endif
