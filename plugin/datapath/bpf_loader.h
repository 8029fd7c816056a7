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
#ifndef VELO_BPF_LOADER_H
#define VELO_BPF_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include "bpf/lib/velo_shared.h"
#include "cni/config.h"

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

/*
 * One pinned map or program and where its fd goes in a caller's struct of
 * fds. Maps are pinned by name at the top of the bpffs dir, programs under
 * the generation dir or VELO_BPF_PROGS_DIR (which carries the ABI version;
 * velo pinned every program there before generations).
 */
#define VELO_STR2(x) #x
#define VELO_STR(x) VELO_STR2(x)
#define VELO_BPF_PROGS_DIR "progs_v" VELO_STR(VELO_ABI)
struct velo_pin {
	const char *name;
	bool map;
	size_t fd_offset;
	bool generation; /* a program pinned under this build's generation dir */
};

/*
 * The programs of every group (veth, cgroup, sockmap) are pinned per
 * generation, one hash of their objects: <bpffs_dir>/progs_g<generation>/. A new velo
 * whose programs differ loads its own beside the old ones instead of reusing
 * them, and velo_bpf_upgrade (bpf_upgrade.h) moves live pods over.
 */
#define VELO_BPF_GEN_PREFIX "progs_g"
const char *velo_bpf_generation(void);
int velo_bpf_gen_dir(const struct velo_paths *paths, char *buf, size_t len);
/* A map pin name of an earlier layout: same name as one of this velo's but another _vN. */
bool velo_map_pin_superseded(const char *name);

/* <bpffs_dir>/<name>, a map pinned by name (velo_pin_path): an fd, or -errno. */
int velo_map_pin_open(const struct velo_paths *paths, const char *name);
int velo_pin_path(const struct velo_paths *paths, const struct velo_pin *pin, char *buf,
		  size_t len);
/* Opens every pin into fds; on failure closes what it opened and returns -errno. */
int velo_pins_open(const struct velo_paths *paths, const struct velo_pin *pins, size_t n_pins,
		   void *fds);
/* Closes every fd of the pins in fds and sets it to -1. */
void velo_pins_close(const struct velo_pin *pins, size_t n_pins, void *fds);

/*
 * CHECK's first step for a pinned link: reads the link at path and the id of
 * the program prog_fd. A missing or unreadable pin is recorded as drift
 * ("<feature>: link pin ... missing") and returns -EIO.
 */
struct bpf_link_info;
int velo_bpf_read_link(const char *feature, const char *path, int prog_fd,
		       struct bpf_link_info *link, unsigned *prog_id);

/* Mounts bpffs on the parent of bpffs_dir unless a bpffs already covers it; creates the dir. */
int velo_bpffs_prepare(const char *bpffs_dir);
/* The BPF loader lock, <run_dir>/bpf.lock: an fd for lock_release, or -errno. */
int velo_bpf_loader_lock(const struct velo_paths *paths, unsigned lock_timeout_ms);
/* <bpffs_dir>/links/<host_ifname>_<kind>; kind is "tc", "xdp", "cg_acct_in", ... */
int velo_bpf_link_path(const struct velo_paths *paths, const char *host_ifname, const char *kind,
		       char *buf, size_t len);
/* Routes libbpf's messages to velo's log (warnings as warnings, the rest as debug). */
void velo_bpf_set_print(void);

#endif
