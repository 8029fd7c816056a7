/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pins under the bpffs dir (default /sys/fs/bpf/velo):
 *   <dir>/velo_*_v1                       maps, pinned by name by libbpf
 *   <dir>/progs_g<generation>/<name>      the fast path's, cgroup and sockmap programs
 *   <dir>/links/<host_ifname>_<kind>      one link per endpoint and hook
 */
#ifndef VELO_DATAPATH_PINS_H
#define VELO_DATAPATH_PINS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/types.h"
#include "bpf/lib/velo_shared.h"

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

/* <bpffs_dir>/<name>, a map pinned by name (velo_pin_path): an fd, or -errno. */
int velo_map_pin_open(const struct velo_paths *paths, const char *name);
int velo_pin_path(const struct velo_paths *paths, const struct velo_pin *pin, char *buf,
		  size_t len);
/* Opens every pin into fds; on failure closes what it opened and returns -errno. */
int velo_pins_open(const struct velo_paths *paths, const struct velo_pin *pins, size_t n_pins,
		   void *fds);
/*
 * Pins prog where pin says, replacing a pin a half-finished earlier load left
 * (links keep their own reference to the program they run). 0 or -errno.
 */
struct bpf_program;
int velo_pin_program(const struct velo_paths *paths, const struct velo_pin *pin,
		     struct bpf_program *prog);
/* velo_pin_program for each program of obj that one of pins names (by program name). */
struct bpf_object;
int velo_pin_programs(const struct velo_paths *paths, struct bpf_object *obj,
		      const struct velo_pin *pins, size_t n_pins);
/*
 * Whether every pin still holds the map or program its fd in fds is (its kernel id): false
 * once one was removed or replaced (bpffs remounted, the pins removed, a load that found them
 * missing pinned new ones).
 */
bool velo_pins_current(const struct velo_paths *paths, const struct velo_pin *pins, size_t n_pins,
		       const void *fds);
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
/* <bpffs_dir>/links/<host_ifname>_<kind>; kind is "tc", "xdp", "cg_acct_in", ... */
int velo_bpf_link_path(const struct velo_paths *paths, const char *host_ifname, const char *kind,
		       char *buf, size_t len);

/* The BPF loader lock, <run_dir>/bpf.lock: an fd for lock_release, or -errno. */
int velo_bpf_loader_lock(const struct velo_paths *paths, unsigned lock_timeout_ms);

#endif
