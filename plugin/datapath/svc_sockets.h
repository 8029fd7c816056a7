/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which TCP sockets came through a Service (bpf/iter_svc_sk.bpf.c): a TCP
 * socket iterator over the reverse state connect wrote, read in the pods'
 * network namespaces, for veloctl sockets. Loads nothing that stays.
 */
#ifndef VELO_DATAPATH_SVC_SOCKETS_H
#define VELO_DATAPATH_SVC_SOCKETS_H

#include "base/types.h"
#include "bpf/lib/velo_svc.h"

/*
 * The records of every TCP socket connect translated in the n_netns network
 * namespaces (nsfs paths; one that is gone is skipped), in *out (free()),
 * their number in *n. 0; -ENOENT when velo_svc_sk_v2 isn't pinned (no pod
 * opted in); else -errno.
 */
int velo_svc_sockets_read(const struct velo_paths *paths, char *const *netns, size_t n_netns,
			  struct velo_svc_sk_rec **out, size_t *n);

#endif
