/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which TCP sockets came through a Service (bpf/iter_svc_sk.bpf.c): an
 * iterator over the per-socket reverse state connect wrote, for veloctl
 * sockets. Node-wide (the map's elements, whatever the netns), read once per
 * call; loads nothing that stays.
 */
#ifndef VELO_SVC_SOCKETS_H
#define VELO_SVC_SOCKETS_H

#include "base/types.h"
#include "bpf/lib/velo_svc.h"

/*
 * The records of every TCP socket connect translated, in *out (free()), their
 * number in *n. 0; -ENOENT when velo_svc_sk_v1 isn't pinned (no pod opted in);
 * else -errno (a kernel without sk_storage map iterators: Linux < 5.10).
 */
int velo_svc_sockets_read(const struct velo_paths *paths, struct velo_svc_sk_rec **out, size_t *n);

#endif
