/* SPDX-License-Identifier: Apache-2.0 */
/* Moving one pod's cgroup programs and velo_tc_deny to this generation's. */
#ifndef VELO_UPGRADE_CGROUP_H
#define VELO_UPGRADE_CGROUP_H

#include "datapath/loader.h"
#include "state/state.h"

/*
 * One endpoint's cgroup links and velo_tc_deny, under the
 * cgroup lock (waiting at most lock_timeout_ms: -EAGAIN): 1 when they moved,
 * 0 when all was current, or -errno with every one back on its old program.
 */
int velo_cgroup_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
			const struct velo_record *record, const struct velo_bpf_cgroup *bpf);

#endif
