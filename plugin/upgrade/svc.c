// SPDX-License-Identifier: Apache-2.0
/*
 * Moving one pod's service translation links (<bpffs>/links/<ifname>_svc_*)
 * to this generation's programs: all or none (moves.h), as upgrade/cgroup.c
 * does for the other cgroup links. A program of this generation that uses other maps
 * than the pod's (a layout change) leaves the pod where it is.
 */
#include <errno.h>

#include "cgroup/link.h"
#include "upgrade/moves.h"
#include "upgrade/svc.h"

_Static_assert(VELO_SVC_N_HOOKS <= POD_MOVES_MAX, "every hook fits one pod's moves");

int velo_svc_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
		     const struct velo_record *record, const struct velo_svc_bpf *bpf)
{
	struct pod_moves pod = { .record = record };
	int lock_fd, ret = 0;

	if (!record->host_ifname[0])
		return 0;
	/* ADD and DEL attach, take over and detach these links only under the cgroup lock. */
	lock_fd = cgroup_lock_at(paths, lock_timeout_ms);
	if (lock_fd < 0)
		return lock_fd;
	for (int hook = 0; hook < VELO_SVC_N_HOOKS && !ret; hook++) {
		ret = pod_moves_plan_pin(paths, &pod, velo_svc_hook_kind(hook),
					 bpf->prog_fds[hook]);
		if (ret == -ENOENT)
			ret = 0; /* the pod fell back to kube-proxy */
	}
	if (!ret)
		ret = pod_moves_apply(&pod);
	pod_moves_close(&pod);
	cgroup_unlock(lock_fd);
	return ret;
}
