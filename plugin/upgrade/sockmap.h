/* SPDX-License-Identifier: Apache-2.0 */
/* Moving one pod's sock_ops link to this generation's program. */
#ifndef VELO_UPGRADE_SOCKMAP_H
#define VELO_UPGRADE_SOCKMAP_H

#include "datapath/sockmap_bpf.h"
#include "state/state.h"

/*
 * One endpoint's sock_ops link, by bpf_link_update: 1
 * when it moved, 0 when it was current or there is none, or -errno.
 */
int velo_sockmap_upgrade(const struct velo_paths *paths, const struct velo_record *record,
			 const struct velo_sockmap_bpf *bpf);

#endif
