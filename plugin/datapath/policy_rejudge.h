/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether a write of the policy maps can change a flow's verdict
 * (policy_rejudge.c), so the revision must move and every flow be judged
 * again; else it stays, and a Pod change elsewhere in the cluster costs this
 * node's flows nothing. Pure.
 */
#ifndef VELO_DATAPATH_POLICY_REJUDGE_H
#define VELO_DATAPATH_POLICY_REJUDGE_H

#include <stdbool.h>

#include "datapath/policy_diff.h"
#include "policy/table.h"

/*
 * tables: what is written now; old_ips (n_old, sorted): the address entries
 * before; ips: their diff. True when rules or subjects changed
 * (rules_or_subjects), or an address entry was removed or changed that a
 * rule or subject names by its pod identity, that is a local pod's, or that
 * is a prefix. A new address entry only adds matches (verdicts that were
 * allowances stay so; denials are never cached), so it needs no new judging.
 */
bool velo_pol_rejudge(const struct velo_pol_tables *tables, const struct velo_pol_ip_entry *old_ips,
		      unsigned n_old, const struct velo_pol_diff *ips, bool rules_or_subjects);

#endif
