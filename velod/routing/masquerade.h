/* SPDX-License-Identifier: Apache-2.0 */
/* Masquerading pod traffic that leaves the cluster (nftables table inet velo_masq). */
#ifndef VELOD_ROUTING_MASQUERADE_H
#define VELOD_ROUTING_MASQUERADE_H

#include "k8s/annotations.h"

/* Sources own (this node's pod CIDRs), destinations outside exempt; 0 or -errno. */
int masquerade_apply(const struct velo_cidr *own, unsigned n_own, const struct velo_cidr *exempt,
		     unsigned n_exempt);

#endif
