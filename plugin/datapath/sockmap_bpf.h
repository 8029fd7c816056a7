/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The socket short-circuit's BPF objects (bpf/sockmap.bpf.c), loaded once per
 * node under the BPF loader lock and pinned; later users open the pins.
 *   <bpffs>/velo_sock_v1, velo_smpod_v1, ...   maps (bpf/lib/velo_sockmap.h)
 *   <bpffs>/progs_g<gen>/velo_sockops|velo_sk_msg programs, per generation (datapath/loader.h)
 *   <bpffs>/links/velo_sk_msg                   sk_msg on the sockhash (one per node)
 *   <bpffs>/links/<host_ifname>_sockops          sock_ops on one pod's cgroup
 * velod moves live pods' sock_ops links and the sk_msg link to a new
 * generation's programs (upgrade/pass.h). The verdict mode is fixed at load
 * (rodata) by the process that loads a generation: VELO_SOCKMAP_MODE
 * (apply-bytes, per-message, permanent) and VELO_SOCKMAP_APPLY_BYTES override
 * the default for benchmarks.
 */
#ifndef VELO_DATAPATH_SOCKMAP_BPF_H
#define VELO_DATAPATH_SOCKMAP_BPF_H

#include <stddef.h>
#include <stdint.h>

#include "cni/config.h"
#include "cni/result.h"
#include "datapath/sockmap_probe.h"

struct velo_sm_addr;

#define VELO_ENV_SOCKMAP_MODE "VELO_SOCKMAP_MODE"
#define VELO_ENV_SOCKMAP_APPLY_BYTES "VELO_SOCKMAP_APPLY_BYTES"

struct velo_sockmap_bpf {
	int sockhash_fd; /* velo_sock_v1 */
	int pods_fd; /* velo_smpod_v1 */
	int acct_fd; /* velo_smacct_v1 */
	int stats_fd; /* velo_smstat_v2 */
	int sockops_prog_fd; /* velo_sockops */
	int msg_prog_fd; /* velo_sk_msg */
};

/* Opens the pins, loading first when any is missing (BPF loader lock, bounded wait). */
int velo_sockmap_bpf_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
			  const struct velo_sockmap_features *features,
			  struct velo_sockmap_bpf *bpf);
/* Existing pins only: -ENOENT when any is missing. */
int velo_sockmap_bpf_open_pinned(const struct velo_paths *paths, struct velo_sockmap_bpf *bpf);
void velo_sockmap_bpf_close(struct velo_sockmap_bpf *bpf);
/* <bpffs>/links/<host_ifname>_sockops */
int velo_sockmap_link_path(const struct velo_paths *paths, const char *host_ifname, char *buf,
			   size_t len);
/* "apply-bytes", "per-message", "permanent" (enum velo_sm_mode); NULL if out of range. */
const char *velo_sockmap_mode_str(unsigned mode);
/* A pod address as velo_smpod_v1's key: IPv4 as ::ffff:a.b.c.d. */
void velo_sockmap_pod_key(const struct velo_ip *ip, struct velo_sm_addr *key);

/*
 * Takes a pod's sockets out of the sockhash, best effort: every key of the
 * pod's netns (cookie) and every key whose remote is one of the pod's
 * addresses (its peers' ends). A socket leaving the sockhash loses its psock
 * and with it the redirect its sk_msg verdict cached: from then on it is a
 * plain TCP socket on the routed path. Returns how many went.
 */
int velo_sockmap_forget_pod(int sockhash_fd, uint64_t cookie, const struct velo_sm_addr *addrs,
			    unsigned n_addrs);

/*
 * Moves the node's one sk_msg link onto bpf's program (an upgrade), under the
 * BPF loader lock (waiting at most lock_timeout_ms): as velo_sockmap_msg_attach.
 */
int velo_sockmap_msg_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
			     const struct velo_sockmap_bpf *bpf);

#endif
