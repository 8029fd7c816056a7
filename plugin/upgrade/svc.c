// SPDX-License-Identifier: Apache-2.0
/*
 * Moving one pod's service translation links (<bpffs>/links/<ifname>_svc_*)
 * to this generation's programs: all or none (moves.h), as upgrade/cgroup.c
 * does for the other cgroup links. A program of this generation that uses other maps
 * than the pod's (a layout change) leaves the pod where it is.
 */
#include <errno.h>

#include "upgrade/moves.h"
#include "upgrade/svc.h"

_Static_assert(VELO_SVC_N_HOOKS <= POD_MOVES_MAX, "every hook fits one pod's moves");

static int plan_hook(const struct velo_paths *paths, struct pod_moves *pod, unsigned hook,
		     const void *arg)
{
	const struct velo_svc_bpf *bpf = arg;
	int ret = pod_moves_plan_pin(paths, pod, velo_svc_hook_kind(hook), bpf->prog_fds[hook]);

	return ret == -ENOENT ? 0 : ret; /* none: the pod fell back to kube-proxy */
}

int velo_svc_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
		     const struct velo_record *record, const struct velo_svc_bpf *bpf)
{
	return pod_moves_run(paths, lock_timeout_ms, record, VELO_SVC_N_HOOKS, plan_hook, bpf);
}
