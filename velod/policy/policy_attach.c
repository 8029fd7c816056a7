// SPDX-License-Identifier: Apache-2.0
/* NetworkPolicy's programs onto this node's pods after each write of the maps (policy_attach.h). */
#include <errno.h>
#include <string.h>

#include "base/lock.h"
#include "base/log.h"
#include "datapath/policy_judge.h"
#include "datapath/sockmap_bpf.h"
#include "state/state.h"
#include "agent/agent.h"
#include "policy_attach.h"
#include "policy_lock.h"

struct attach_pass {
	const struct agent_config *config;
	const struct velo_policy_bpf *bpf;
	const struct velo_pol_tables *tables;
	bool egress_isolated; /* some local pod's egress is: velo_pol_uplink on the others */
	struct policy_attach_counts *counts;
};

/*
 * A ready record: the programs on when its pod is a subject, off when its pod
 * is known and selected by nothing, whatever ADD did (a pod wired before
 * policy was turned on is enforced now). A pod velod has no Pod object for
 * yet keeps what ADD gave it (fail closed). Under the attachment lock, never
 * waiting: a busy one is tried at the next sync.
 */
static int attach_record(const struct velo_record *record, void *ctx)
{
	struct attach_pass *pass = ctx;
	const struct velo_pol_placed *placed;
	bool attached, want, deliver, want_deliver;
	int fd, ret = 0;

	if (record->phase != VELO_PHASE_READY || !record->pod_namespace[0])
		return 0;
	placed = velo_pol_tables_placed(pass->tables, record->pod_namespace, record->pod_name);
	if (!placed || !placed->id)
		return 0;
	want = placed->isolate != 0;
	attached = velo_policy_attached(&pass->config->paths, record);
	want_deliver = !want && pass->egress_isolated;
	deliver = velo_policy_deliver_attached(&pass->config->paths, record);
	if (want == attached && want_deliver == deliver)
		return 0;
	fd = policy_lock_try(pass->config, record, &pass->counts->busy);
	if (fd < 0)
		return 0;
	if (want == attached) {
		/* only velo_pol_uplink's part changes */
	} else if (want) {
		ret = velo_policy_attach(&pass->config->paths, pass->bpf, record);
		if (ret) {
			pr_warn("policy: attach to %s (%s/%s): %s", record->host_ifname,
				record->pod_namespace, record->pod_name, strerror(-ret));
			pass->counts->failed++;
		} else {
			pass->counts->attached++;
		}
	} else {
		velo_policy_detach(&pass->config->paths, pass->bpf, record);
		pass->counts->detached++;
	}
	/* After the pod's programs: their detach takes this one too. */
	deliver = velo_policy_deliver_attached(&pass->config->paths, record);
	if (want_deliver != deliver) {
		ret = want_deliver
			      ? velo_policy_deliver_attach(&pass->config->paths, pass->bpf, record)
			      : (velo_policy_deliver_detach(&pass->config->paths, record), 0);
		if (ret) {
			pr_warn("policy: velo_pol_uplink on %s (%s/%s): %s", record->host_ifname,
				record->pod_namespace, record->pod_name, strerror(-ret));
			pass->counts->failed++;
		}
	}
	lock_release(fd);
	return 0;
}

static int attach_network(const char *network, void *ctx)
{
	struct attach_pass *pass = ctx;

	return state_record_foreach(&pass->config->paths, network, attach_record, pass);
}

void policy_unpair_denied(const struct agent_config *config, const struct velo_policy_bpf *bpf)
{
	struct velo_sockmap_bpf sockmap;
	int ret;

	if (velo_sockmap_bpf_open_pinned(&config->paths, &sockmap))
		return; /* no sockmap on this node */
	ret = velo_policy_unpair_denied(bpf, sockmap.sockhash_fd);
	velo_sockmap_bpf_close(&sockmap);
	if (ret > 0)
		pr_info("policy: %d short-circuited socket(s) the policy now forbids unpaired",
			ret);
	else if (ret < 0)
		pr_warn("policy: finding forbidden short-circuited sockets: %s", strerror(-ret));
}

void policy_attach_pods(const struct agent_config *config, const struct velo_policy_bpf *bpf,
			const struct velo_pol_tables *tables, struct policy_attach_counts *counts)
{
	struct attach_pass pass = { config, bpf, tables, false, counts };

	for (unsigned i = 0; i < tables->n_placed && !pass.egress_isolated; i++)
		pass.egress_isolated = tables->placed[i].isolate & VELO_POL_JUDGED_EGRESS;
	agent_foreach_network(config, attach_network, &pass);
}
