// SPDX-License-Identifier: Apache-2.0
/* NetworkPolicy's part of velod's /metrics (policy_metrics.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/lib/velo_policy.h"
#include "datapath/policy_bpf.h"
#include "policy/objects.h"
#include "policy.h"
#include "policy_metrics.h"
#include "policy_report.h"
#include "policy_show.h"

static const char *const reasons[VELO_POL_DROP_MAX] = {
	[VELO_POL_DROP_EGRESS] = "egress",
	[VELO_POL_DROP_INGRESS] = "ingress",
	[VELO_POL_DROP_PENDING] = "pending",
	[VELO_POL_DROP_SPOOFED] = "spoofed",
};

/* velo_pol_drop_v1: one series per (local pod, reason) with drops. */
static void put_drops(const struct policy *policy, const struct agent_config *config, FILE *text)
{
	int cpus = libbpf_num_possible_cpus();
	struct velo_pol_drop_key key, prev;
	struct velo_pol_drop *values;
	struct velo_policy_bpf bpf;
	bool first = true;

	fprintf(text, "# HELP velo_policy_drops_total Packets NetworkPolicy dropped, per pod and "
		      "reason.\n# TYPE velo_policy_drops_total counter\n");
	if (cpus <= 0 || velo_policy_bpf_open_pinned(&config->paths, &bpf))
		return;
	values = calloc((size_t)cpus, sizeof(*values));
	while (values && !bpf_map_get_next_key(bpf.drop_fd, first ? NULL : &prev, &key)) {
		char pod[VELO_POL_NS_MAX + VELO_POL_NAME_MAX + 1];
		unsigned long long packets = 0;

		prev = key;
		first = false;
		if (key.reason >= VELO_POL_DROP_MAX || !reasons[key.reason] ||
		    bpf_map_lookup_elem(bpf.drop_fd, &key, values) ||
		    !policy_pod_of(policy, key.addr, pod, sizeof(pod)))
			continue;
		for (int cpu = 0; cpu < cpus; cpu++)
			packets += values[cpu].packets;
		fprintf(text, "velo_policy_drops_total{pod=\"%s\",reason=\"%s\"} %llu\n", pod,
			reasons[key.reason], packets);
	}
	free(values);
	velo_policy_bpf_close(&bpf);
}

char *policy_metrics(const struct policy *policy, const struct agent_config *config)
{
	char *out = NULL;
	size_t len = 0;
	FILE *text;

	if (config->policy_source == POLICY_NONE)
		return NULL;
	text = open_memstream(&out, &len);
	if (!text)
		return NULL;
	fprintf(text,
		"# HELP velo_policy_syncs_total Writes of the policy maps.\n"
		"# TYPE velo_policy_syncs_total counter\nvelo_policy_syncs_total %llu\n"
		"# HELP velo_policy_errors_total Bad policy files, failed computations, map writes "
		"and attaches.\n# TYPE velo_policy_errors_total counter\n"
		"velo_policy_errors_total %llu\n"
		"# HELP velo_policy_sync_seconds How long the last write of the policy maps took "
		"(records read, computed, written).\n# TYPE velo_policy_sync_seconds gauge\n"
		"velo_policy_sync_seconds %.6f\n"
		"# HELP velo_policy_identities Pod and ipBlock identities in the maps.\n"
		"# TYPE velo_policy_identities gauge\nvelo_policy_identities %u\n"
		"# HELP velo_policy_rules Rule entries in velo_pol_rule_v1.\n"
		"# TYPE velo_policy_rules gauge\nvelo_policy_rules %u\n",
		(unsigned long long)policy->syncs, (unsigned long long)policy->errors,
		policy->sync_seconds, policy->identities, policy->rules);
	put_drops(policy, config, text);
	if (policy_problems(policy))
		policy_report_metrics(policy_problems(policy), text);
	if (fclose(text)) {
		free(out);
		return NULL;
	}
	return out;
}
