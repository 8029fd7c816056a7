/* SPDX-License-Identifier: Apache-2.0 */
/* Moving one pod's service translation links to this generation's programs. */
#ifndef VELO_UPGRADE_SVC_H
#define VELO_UPGRADE_SVC_H

#include "datapath/svc_bpf.h"
#include "state/state.h"

/*
 * The endpoint's eight sock_addr links (features/svc.c), under the
 * cgroup lock (at most lock_timeout_ms: -EAGAIN): 1 when they moved, 0 when
 * all was current or the pod has none, or -errno with every one back on its
 * old program (-EXDEV: this generation's programs use other maps).
 */
int velo_svc_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
		     const struct velo_record *record, const struct velo_svc_bpf *bpf);

#endif
