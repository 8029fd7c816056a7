/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Moving live pods to this velo's programs after an upgrade. The programs
 * are pinned per generation (datapath/loader.h), so a new velo whose programs
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
#ifndef VELO_UPGRADE_PASS_H
#define VELO_UPGRADE_PASS_H

#include "base/types.h"

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

#endif
