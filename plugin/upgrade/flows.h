/* SPDX-License-Identifier: Apache-2.0 */
/* Moving one pod's connection-event links to this generation's programs. */
#ifndef VELO_UPGRADE_FLOWS_H
#define VELO_UPGRADE_FLOWS_H

#include "datapath/flow_bpf.h"
#include "state/state.h"

/*
 * The endpoint's flow links (velo.dev/flows: features/flows.c), under the
 * cgroup lock (at most lock_timeout_ms: -EAGAIN): 1 when they moved, 0 when
 * all was current or the pod has none, or -errno with every one back on its
 * old program (-EXDEV: this generation's programs use other maps).
 */
int velo_flows_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
		       const struct velo_record *record, const struct velo_flow_bpf *bpf);

#endif
