// SPDX-License-Identifier: Apache-2.0
/*
 * Moving one pod's NetworkPolicy programs (tcx links <bpffs>/links/<ifname>_pol_from,
 * _pol_to, _pol_deliver, or clsact filters where the kernel has no tcx) to this
 * generation's programs: all or none (moves.h). They share the pinned maps, so a pod
 * moves between two generations' programs without a moment unjudged.
 */
#include <errno.h>

#include "upgrade/moves.h"
#include "upgrade/policy.h"

_Static_assert(VELO_POL_N_HOOKS <= POD_MOVES_MAX, "every hook fits one pod's moves");

/* A clsact filter has no link to update: tc's replace at its handle and priority. */
static int filter_move(const struct velo_record *record, enum velo_policy_hook hook, int prog_fd)
{
	int ret = velo_tc_hook_filter_move(velo_policy_tc_hook(hook), record->host_ifname,
					   record->host_ifindex, prog_fd);

	return ret < 0 ? ret : 0;
}

static int move_from(const struct velo_record *record, int prog_fd)
{
	return filter_move(record, VELO_POL_HOOK_FROM, prog_fd);
}

static int move_to(const struct velo_record *record, int prog_fd)
{
	return filter_move(record, VELO_POL_HOOK_TO, prog_fd);
}

static int move_deliver(const struct velo_record *record, int prog_fd)
{
	return filter_move(record, VELO_POL_HOOK_DELIVER, prog_fd);
}

static int (*const filter_movers[VELO_POL_N_HOOKS])(const struct velo_record *, int) = {
	[VELO_POL_HOOK_FROM] = move_from,
	[VELO_POL_HOOK_TO] = move_to,
	[VELO_POL_HOOK_DELIVER] = move_deliver,
};

static int plan_hook(const struct velo_paths *paths, struct pod_moves *pod, unsigned hook,
		     const void *arg)
{
	const struct velo_record *record = pod->record;
	int prog_fd = velo_policy_hook_prog(arg, hook);
	unsigned filter_id;
	int ret;

	ret = pod_moves_plan_pin(paths, pod, velo_policy_hook_kind(hook), prog_fd);
	if (ret != -ENOENT)
		return ret;
	filter_id = velo_tc_hook_prog_id(paths, velo_policy_tc_hook(hook), record->host_ifname,
					 record->host_ifindex);
	/* A pod has its own pair, pol_deliver or none. */
	return filter_id ? pod_moves_plan(pod, velo_policy_hook_kind(hook), -1, filter_id, prog_fd,
					  filter_movers[hook])
			 : 0;
}

int velo_policy_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
			const struct velo_record *record, const struct velo_policy_bpf *bpf)
{
	return pod_moves_run(paths, lock_timeout_ms, record, VELO_POL_N_HOOKS, plan_hook, bpf);
}
