/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velo_pol_ip_v1's entries (ips.c): every pod address, ipBlock prefix,
 * Service CIDR and node address with its identities and flags, and the two
 * defaults (::/0, ::ffff:0:0/96) that catch every other address.
 */
#ifndef VELO_POLICY_IPS_H
#define VELO_POLICY_IPS_H

#include "policy/build.h"

/* Into tables->ips, sorted, one entry per key: 0 or -ENOMEM. */
int velo_pol_ips_build(const struct velo_pol_build *build, struct velo_pol_tables *tables);

#endif
