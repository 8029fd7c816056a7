/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Moving live pods to this velo's programs after an upgrade. The programs
 * are pinned per generation (bpf_loader.h), so a new velo whose programs
 * differ loads its own beside the old ones; pods wired before keep running
 * the old code until velod moves them: their links by bpf_link_update (a
 * clsact filter by replacing it), their devmap entry's program, and their
 * endpoint entries where a map's layout changed (a new layout is a new map
 * name, which starts empty). Until then old and new programs share only maps
 * of unchanged layout; a pod pair whose programs don't share an endpoint map
 * doesn't find each other and takes the routed path. A pod's cgroup programs
 * move all together or not at all, and only onto programs that use the same
 * maps (their per-cgroup storage stays with the link). Once every pod is
 * moved, the old generation's pins and the maps superseded by new names are
 * unpinned (the kernel frees them when their last user goes).
 */
#ifndef VELO_BPF_UPGRADE_H
#define VELO_BPF_UPGRADE_H

#include <linux/types.h>

#include "datapath/bpf_loader.h"
#include "state/state.h"

struct velo_upgrade {
	unsigned moved; /* endpoints moved to this generation */
	unsigned busy; /* skipped: an ADD or DEL held the attachment lock; next pass */
	unsigned failed;
	unsigned unpinned; /* old program and map pins removed */
};

/*
 * One pass over every endpoint record under paths with a fast path on: also
 * moves pods whose programs were re-pinned under the same generation (pins
 * removed by hand, or bpffs remounted). Nothing to do when no fast-path
 * program is pinned. 0, or the first -errno of a pass that couldn't run.
 */
int velo_bpf_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
		     struct velo_upgrade *out);

/* One endpoint (fastpath.c): 1 when something moved, 0 when all was current, or -errno. */
int velo_fastpath_upgrade(const struct velo_paths *paths, const struct velo_record *record,
			  const struct velo_bpf *bpf);
/*
 * One endpoint's cgroup links and velo_tc_deny (cgroup_upgrade.c), under the
 * cgroup lock (waiting at most lock_timeout_ms: -EAGAIN): 1 when they moved,
 * 0 when all was current, or -errno with every one back on its old program.
 */
int velo_cgroup_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
			const struct velo_record *record, const struct velo_bpf_cgroup *bpf);

/*
 * One endpoint's sock_ops link (sockmap_upgrade.c), by bpf_link_update: 1
 * when it moved, 0 when it was current or there is none, or -errno.
 */
struct velo_sockmap_bpf;
int velo_sockmap_upgrade(const struct velo_paths *paths, const struct velo_record *record,
			 const struct velo_sockmap_bpf *bpf);
/*
 * The node's one sk_msg link (sockmap_bpf.c), under the BPF loader lock
 * (waiting at most lock_timeout_ms): as velo_sockmap_msg_attach.
 */
int velo_sockmap_msg_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
			     const struct velo_sockmap_bpf *bpf);

/*
 * 0 when the program new_fd uses the very velo_* maps the program old_fd
 * does, -EXDEV when not, or -errno (cgroup_upgrade.c).
 */
int velo_prog_same_maps(int old_fd, int new_fd);
/* The id of the program prog_fd, 0 when unreadable. */
unsigned velo_prog_id(int prog_fd);
/* The program id of the clsact ingress filter at handle and priority, 0 when there is none. */
unsigned velo_clsact_prog_id(int ifindex, __u32 handle, __u32 priority);

#endif
