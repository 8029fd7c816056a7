/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velo's BPF objects, loaded once per node and pinned; every later user only
 * opens the pins. The first user (velod or the first ADD) mounts bpffs if
 * needed and loads under <run_dir>/bpf.lock, paying CO-RE relocation against
 * the kernel's BTF once. Pins under the bpffs dir (default /sys/fs/bpf/velo):
 *   <dir>/velo_*_v1                       maps, pinned by name by libbpf
 *   <dir>/progs_g<generation>/<name>      the fast path's, cgroup and sockmap programs
 *   <dir>/links/<host_ifname>_<kind>      one link per endpoint and hook
 * The per-pod cgroup objects (cgroup_skb, cgroup_sock) form a second group
 * with its own open calls, loaded on first use the same way, so a kernel that
 * can't load one group never costs the other.
 */
#ifndef VELO_DATAPATH_LOADER_H
#define VELO_DATAPATH_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/types.h"
#include "bpf/lib/velo_shared.h"
#include "datapath/generation.h"
#include "datapath/pins.h"

struct velo_bpf {
	int endpoints_fd; /* velo_ep_v1 */
	int stats_fd; /* velo_stats_v2 */
	int xdp_tx_fd; /* velo_xdp_tx_v1 */
	int dst_stats_fd; /* velo_dst_v1 */
	int tc_prog_fd; /* velo_tc_ingress */
	int xdp_prog_fd; /* velo_xdp_host */
	int devmap_prog_fd; /* velo_xdp_dst */
};

/*
 * Opens the pins, loading and pinning first when they are missing (takes
 * the BPF loader lock, waiting at most lock_timeout_ms). Records nothing in
 * the CNI error: callers decide whether a failure is fatal.
 */
int velo_bpf_open(const struct velo_paths *paths, unsigned lock_timeout_ms, struct velo_bpf *bpf);
/* Opens existing pins only, never loads: -ENOENT when any is missing (DEL, CHECK). */
int velo_bpf_open_pinned(const struct velo_paths *paths, struct velo_bpf *bpf);
void velo_bpf_close(struct velo_bpf *bpf);
/*
 * Before obj is loaded: its copies of the maps above (found by name; one it
 * lacks is skipped) take bpf's fds, so it runs on the pod objects' maps
 * (velod's uplink programs). By fd: libbpf 1.1's own pin check fails for
 * devmaps.
 */
int velo_bpf_share_maps(const struct velo_bpf *bpf, struct bpf_object *obj);

/* The per-pod cgroup programs and their maps (bpf/lib/cgroup.h). */
struct velo_bpf_cgroup {
	int counters_fd; /* velo_cg_cnt_v1 */
	int config_fd; /* velo_cg_cfg_v1 */
	int deny_fd; /* velo_deny_v1 */
	int deny_if_fd; /* velo_deny_if_v1 */
	int acct_in_fd; /* velo_cg_acct_in */
	int acct_eg_fd; /* velo_cg_acct_eg */
	int deny_eg_fd; /* velo_cg_deny_eg */
	int sockopt_fd; /* velo_cg_sockopt */
	int tc_deny_fd; /* velo_tc_deny */
};

/* As velo_bpf_open and friends, for the cgroup group. */
int velo_bpf_cgroup_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
			 struct velo_bpf_cgroup *bpf);
int velo_bpf_cgroup_open_pinned(const struct velo_paths *paths, struct velo_bpf_cgroup *bpf);
void velo_bpf_cgroup_close(struct velo_bpf_cgroup *bpf);

/* A map pin name of an earlier layout: same name as one of this velo's but another _vN. */
bool velo_map_pin_superseded(const char *name);

/*
 * Opens the pins into fds. When one is missing, takes the loader lock, looks
 * again (another ADD may have loaded meanwhile), prepares bpffs and calls
 * load(paths, arg), which loads and pins them, then opens them. -EAGAIN only
 * when the lock stayed busy (callers answer 11), never for a load error.
 */
int velo_bpf_open_or_load(const struct velo_paths *paths, unsigned lock_timeout_ms,
			  const struct velo_pin *pins, size_t n_pins, void *fds,
			  int (*load)(const struct velo_paths *paths, const void *arg),
			  const void *arg);

/*
 * The opening of every load(paths, arg): this generation's pin directory
 * exists, and opts (for a skeleton's __open_opts) has libbpf pin maps by name
 * under bpffs_dir. 0 or -errno.
 */
struct bpf_object_open_opts;
int velo_bpf_load_prepare(const struct velo_paths *paths, struct bpf_object_open_opts *opts);

/*
 * Whether this kernel offers bpf_skb_ct_lookup and bpf_ct_release (nf_conntrack
 * built in, or its module loaded): what a tc object sets velo_have_ct_kfuncs
 * (bpf/lib/ct_kfuncs.h) from before load.
 */
bool velo_bpf_have_skb_ct_kfuncs(void);

/* Routes libbpf's messages to velo's log (warnings as warnings, the rest as debug). */
void velo_bpf_set_print(void);

#endif
