// SPDX-License-Identifier: Apache-2.0
/* Whether a write of the policy maps changes any verdict (policy_rejudge.h). */
#include <stdlib.h>

#include "datapath/policy_rejudge.h"

/* Whether a rule or subject of tables names id (as subject or peer). */
static bool named(const struct velo_pol_tables *tables, __u32 id)
{
	if (id == VELO_ID_NONE)
		return false;
	if (velo_pol_tables_subject(tables, id))
		return true;
	for (unsigned i = 0; i < tables->n_rules; i++)
		if (tables->rules[i].key.peer == id || tables->rules[i].key.subject == id)
			return true;
	return false;
}

/* An entry whose going or change can take an allowance away. */
static bool matters(const struct velo_pol_tables *tables, const struct velo_pol_ip_entry *entry)
{
	return entry->key.prefixlen != 128 || (entry->value.flags & VELO_POL_IP_LOCAL) ||
	       named(tables, entry->value.pod_id);
}

bool velo_pol_rejudge(const struct velo_pol_tables *tables, const struct velo_pol_ip_entry *old_ips,
		      unsigned n_old, const struct velo_pol_diff *ips, bool rules_or_subjects)
{
	if (rules_or_subjects)
		return true;
	for (unsigned i = 0; i < ips->n_del; i++)
		if (matters(tables, &old_ips[ips->del[i]]))
			return true;
	for (unsigned i = 0; i < ips->n_put; i++) {
		const struct velo_pol_ip_entry *now = &tables->ips[ips->put[i]], *before;

		before = n_old ? bsearch(now, old_ips, n_old, sizeof(*old_ips), velo_pol_ip_cmp)
			       : NULL;
		if (!before) {
			/* New: a local pod's or a prefix may isolate or re-map; others only add. */
			if (now->key.prefixlen != 128 || (now->value.flags & VELO_POL_IP_LOCAL))
				return true;
			continue;
		}
		if (matters(tables, before) || matters(tables, now) ||
		    before->value.cidr_id != now->value.cidr_id ||
		    before->value.flags != now->value.flags)
			return true;
	}
	return false;
}
