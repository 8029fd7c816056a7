// SPDX-License-Identifier: Apache-2.0
/*
 * Moving one pod's NetworkPolicy links (<bpffs>/links/<ifname>_pol_from,
 * _pol_to, _pol_deliver) to this generation's programs: all or none
 * (moves.h). They share the pinned maps, so a pod moves between two
 * generations' programs without a moment unjudged.
 */
#include <errno.h>

#include "upgrade/moves.h"
#include "upgrade/policy.h"

_Static_assert(VELO_POL_N_HOOKS <= POD_MOVES_MAX, "every hook fits one pod's moves");

static int plan_hook(const struct velo_paths *paths, struct pod_moves *pod, unsigned hook,
		     const void *arg)
{
	const struct velo_policy_bpf *bpf = arg;
	int ret = pod_moves_plan_pin(paths, pod, velo_policy_hook_kind(hook),
				     velo_policy_hook_prog(bpf, hook));

	return ret == -ENOENT ? 0 : ret; /* a pod has its own pair, pol_deliver or none */
}

int velo_policy_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
			const struct velo_record *record, const struct velo_policy_bpf *bpf)
{
	return pod_moves_run(paths, lock_timeout_ms, record, VELO_POL_N_HOOKS, plan_hook, bpf);
}
