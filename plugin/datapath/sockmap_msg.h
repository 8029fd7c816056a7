/* SPDX-License-Identifier: Apache-2.0 */
/* The node's one sk_msg verdict program on the sockhash. */
#ifndef VELO_DATAPATH_SOCKMAP_MSG_H
#define VELO_DATAPATH_SOCKMAP_MSG_H

#include "base/types.h"

/*
 * Puts prog_fd on the sockhash as its sk_msg verdict, atomically: the pinned
 * link (<bpffs>/links/velo_sk_msg) moves by bpf_link_update, a legacy attach
 * (no sockmap links before Linux 6.10) is replaced by attaching over it; the
 * sockhash is never without a verdict program. The caller holds the BPF
 * loader lock. 1 when it moved or was attached, 0 when it ran prog_fd
 * already, -EXDEV (nothing changed) when the program it runs uses other maps
 * than prog_fd, or -errno.
 */
int velo_sockmap_msg_attach(const struct velo_paths *paths, int prog_fd, int sockhash_fd);

#endif
