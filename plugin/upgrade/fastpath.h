/* SPDX-License-Identifier: Apache-2.0 */
/* Moving one pod's L3 shortcut to this generation's programs. */
#ifndef VELO_UPGRADE_FASTPATH_H
#define VELO_UPGRADE_FASTPATH_H

#include "datapath/loader.h"
#include "state/state.h"

/* One endpoint: 1 when something moved, 0 when all was current, or -errno. */
int velo_fastpath_upgrade(const struct velo_paths *paths, const struct velo_record *record,
			  const struct velo_bpf *bpf);

#endif
