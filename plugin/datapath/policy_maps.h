/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Computed policy tables (policy/table.h) into the pinned maps
 * (policy_maps.c), writing only what changed since the last write and in an
 * order that never opens a moment of allow-all or deny-all for a flow:
 *  1. new and changed rules, NetworkPolicy's then the tiers' (a subject's new
 *     allowances before anything points at them);
 *  2. new and changed subjects (a direction isolated only once its rules are
 *     in; a new identity's flags before any address carries it, else its pod
 *     would pass unisolated for a moment);
 *  3. new and changed addresses (a pod moved to its new identity, whose
 *     flags and rules are there);
 *  4. stale addresses, then subjects, then rules (nothing points at them);
 *  5. velo_pol_st_v1: revision + 1 (flows allowed before are judged again)
 *     when the change can alter a verdict (policy_rejudge.h), and active
 *     (some local pod is a subject).
 * A failed write stops before any removal, leaves the revision and forgets
 * what the maps hold: the next write reads them back.
 */
#ifndef VELO_DATAPATH_POLICY_MAPS_H
#define VELO_DATAPATH_POLICY_MAPS_H

#include <stdbool.h>

#include "datapath/policy_bpf.h"
#include "policy/table.h"

/* What the maps hold after the last write, kept by the caller (zeroed at first). */
struct velo_pol_written {
	bool valid; /* false: read the maps back before the next diff */
	unsigned n_ips, n_subjects, n_rules, n_tier_rules;
	struct velo_pol_ip_entry *ips; /* sorted as the tables are */
	struct velo_pol_subject_entry *subjects;
	struct velo_pol_rule_entry *rules;
	struct velo_pol_tier_entry *tier_rules;
};

/* What a write did. */
struct velo_pol_write_stats {
	unsigned put, removed; /* entries of the four maps */
	__u32 revision; /* velo_pol_st_v1's after it */
};

/* 0, or the first -errno (then nothing stale is removed and the revision is unchanged). */
int velo_pol_maps_write(const struct velo_policy_bpf *bpf, const struct velo_pol_tables *tables,
			struct velo_pol_written *written, struct velo_pol_write_stats *stats);
void velo_pol_written_free(struct velo_pol_written *written);

#endif
