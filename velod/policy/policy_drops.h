/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velo_pol_drop_v1 kept to this node's pods (policy_drops.c): after each
 * sync, the counters of addresses no local pod has any more go, so the map
 * (16,384 entries) never fills with gone pods and new pods' drops are counted.
 */
#ifndef VELOD_POLICY_POLICY_DROPS_H
#define VELOD_POLICY_POLICY_DROPS_H

#include "datapath/policy_bpf.h"
#include "policy/table.h"

/* Returns how many entries went. */
unsigned policy_drops_prune(const struct velo_policy_bpf *bpf,
			    const struct velo_pol_local_pod *local, unsigned n_local);

#endif
