/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One of velo's tc programs on a device, the same code in both attach modes:
 * a tcx link pinned as <bpffs>/links/<ifname>_<kind> where the kernel has tcx
 * (6.6+), else a clsact cls_bpf filter in direct-action mode at the hook's
 * handle and priority, which lives with the device and has no pin. The mode
 * comes from velo's cached probe (tc_attach.h); every query and detach looks
 * for both forms, so a node whose mode changed (the VELO_TC_CLSACT knob, a
 * new kernel) still finds and removes what it attached before.
 *
 * Order: a "first" hook runs in front of the others in tcx (BPF_F_BEFORE); in
 * clsact the same holds by priority (lower runs earlier; tc_attach.h's table).
 */
#ifndef VELO_DATAPATH_TC_HOOK_H
#define VELO_DATAPATH_TC_HOOK_H

#include <stdbool.h>
#include <linux/types.h>

#include "cni/config.h"

struct velo_tc_hook {
	const char *kind; /* the link pin's suffix */
	bool egress; /* tc egress (what the device sends), else tc ingress */
	bool first; /* tcx: in front of every program on the hook */
	__u32 handle; /* clsact: the filter's handle and priority */
	__u32 priority;
};

/* tcx links on this node (the cached probe, and no VELO_TC_CLSACT), else clsact filters. */
bool velo_tc_hook_tcx(const struct velo_paths *paths);

/*
 * prog_fd on the hook of the device ifname at ifindex, in this node's mode.
 * Idempotent: an attachment already there (either form) stays as it is; a
 * pin whose link runs nowhere (a crashed ADD's) is replaced.
 */
int velo_tc_hook_attach(const struct velo_paths *paths, const struct velo_tc_hook *hook,
			const char *ifname, int ifindex, int prog_fd);
/* The program the hook's attachment runs (pinned link or filter), 0 when there is none. */
unsigned velo_tc_hook_prog_id(const struct velo_paths *paths, const struct velo_tc_hook *hook,
			      const char *ifname, int ifindex);
/* Whether there is an attachment: its pinned link runs on the device, or its filter is there. */
bool velo_tc_hook_attached(const struct velo_paths *paths, const struct velo_tc_hook *hook,
			   const char *ifname, int ifindex);
/*
 * The attachment runs prog_fd from now on, never nothing in between: the
 * pinned link by bpf_link_update, the filter by tc's replace at its handle and
 * priority. 1 moved, 0 ran it already, -ENOENT none there, else -errno.
 */
int velo_tc_hook_move(const struct velo_paths *paths, const struct velo_tc_hook *hook,
		      const char *ifname, int ifindex, int prog_fd);
/* The same for the filter alone (no pins at hand: the upgrade's rollback). */
int velo_tc_hook_filter_move(const struct velo_tc_hook *hook, const char *ifname, int ifindex,
			     int prog_fd);
/* Removes either form; the filter only while ifindex is still ifname's (ifindexes are reused). */
void velo_tc_hook_detach(const struct velo_paths *paths, const struct velo_tc_hook *hook,
			 const char *ifname, int ifindex);

#endif
