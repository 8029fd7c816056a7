/* SPDX-License-Identifier: Apache-2.0 */
/* What the kernel says of a loaded program, for the upgrade movers and CHECK. */
#ifndef VELO_DATAPATH_PROG_INFO_H
#define VELO_DATAPATH_PROG_INFO_H

#include <stdbool.h>
#include <linux/types.h>

/* The id of the program prog_fd, 0 when unreadable. */
unsigned velo_prog_id(int prog_fd);
/* The program id of the clsact ingress filter at handle and priority, 0 when there is none. */
unsigned velo_clsact_prog_id(int ifindex, __u32 handle, __u32 priority);
/* The same at tc egress or ingress. */
unsigned velo_clsact_hook_prog_id(int ifindex, bool egress, __u32 handle, __u32 priority);
/*
 * 0 when the program new_fd uses the very velo_* maps the program old_fd
 * does, -EXDEV when not, or -errno.
 */
int velo_prog_same_maps(int old_fd, int new_fd);
/* 0 when new_prog_fd may replace the program old_prog_id, or -errno (-EXDEV: other maps). */
int velo_prog_replaceable(unsigned old_prog_id, int new_prog_fd);
/*
 * Moves the pinned link link_fd onto prog_fd (bpf_link_update), only onto a
 * program using the same maps: 1 moved, 0 current (or on a cgroup that is
 * gone), or -errno.
 */
int velo_link_move(int link_fd, int prog_fd);

#endif
