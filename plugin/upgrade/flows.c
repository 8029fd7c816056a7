// SPDX-License-Identifier: Apache-2.0
/*
 * Moving one pod's connection-event links (<bpffs>/links/<ifname>_flow_ops,
 * _flow_udp_eg, _flow_udp_in) to this generation's programs: all or none
 * (moves.h). Both generations write the one pinned ring, so a moved pod's
 * events keep reaching velod.
 */
#include <errno.h>

#include "upgrade/flows.h"
#include "upgrade/moves.h"

_Static_assert(VELO_FLOW_N_HOOKS <= POD_MOVES_MAX, "every hook fits one pod's moves");

static int plan_hook(const struct velo_paths *paths, struct pod_moves *pod, unsigned hook,
		     const void *arg)
{
	int ret = pod_moves_plan_pin(paths, pod, velo_flow_hook_kind(hook),
				     velo_flow_hook_prog(arg, hook));

	return ret == -ENOENT ? 0 : ret; /* the UDP pair only with velo.dev/flows-udp */
}

int velo_flows_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
		       const struct velo_record *record, const struct velo_flow_bpf *bpf)
{
	return pod_moves_run(paths, lock_timeout_ms, record, VELO_FLOW_N_HOOKS, plan_hook, bpf);
}
