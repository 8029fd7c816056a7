/* SPDX-License-Identifier: Apache-2.0 */
/* This build's BPF generation. */
#ifndef VELO_DATAPATH_GENERATION_H
#define VELO_DATAPATH_GENERATION_H

#include <stddef.h>

#include "base/types.h"

/*
 * The programs of every group (veth, cgroup, sockmap) are pinned per
 * generation, one hash of their objects: <bpffs_dir>/progs_g<generation>/. A new velo
 * whose programs differ loads its own beside the old ones instead of reusing
 * them, and velo_bpf_upgrade (upgrade/pass.h) moves live pods over.
 */
#define VELO_BPF_GEN_PREFIX "progs_g"
const char *velo_bpf_generation(void);
int velo_bpf_gen_dir(const struct velo_paths *paths, char *buf, size_t len);

#endif
