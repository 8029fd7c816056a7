/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Moving one pod's attachments to this generation's programs, all or none:
 * what the cgroup and the services upgrade share. Each is planned first (an
 * fd of the program it runs is held), then every one moves; when one fails,
 * the ones already moved go back to the programs they ran.
 */
#ifndef VELO_UPGRADE_MOVES_H
#define VELO_UPGRADE_MOVES_H

#include "state/state.h"

#define POD_MOVES_MAX 8

/* One attachment to move: a pinned link, or (link_fd -1) one that move_to knows how to reach. */
struct pod_move {
	const char *kind;
	int link_fd;
	int old_prog_fd;
	int new_prog_fd;
	/* For link_fd -1: puts prog_fd in place (0 or -errno). */
	int (*move_to)(const struct velo_record *record, int prog_fd);
};

struct pod_moves {
	const struct velo_record *record;
	struct pod_move moves[POD_MOVES_MAX];
	unsigned n;
};

/*
 * Adds a move off old_prog_id unless it runs new_prog_fd already; takes link_fd
 * either way. -EXDEV (logged) when the new program uses other maps.
 */
int pod_moves_plan(struct pod_moves *pod, const char *kind, int link_fd, unsigned old_prog_id,
		   int new_prog_fd, int (*move_to)(const struct velo_record *record, int prog_fd));
/*
 * The pod's pinned link of kind (<bpffs>/links/<ifname>_<kind>): planned, or
 * nothing to do when its cgroup or device is gone (0); -ENOENT when there is
 * no such pin; else -errno.
 */
int pod_moves_plan_pin(const struct velo_paths *paths, struct pod_moves *pod, const char *kind,
		       int new_prog_fd);
/* Every planned move, or none: 1 when they moved, 0 when there was none, or -errno. */
int pod_moves_apply(struct pod_moves *pod);
/* Closes the fds the plan holds. */
void pod_moves_close(struct pod_moves *pod);
/*
 * The whole move of one endpoint under the cgroup lock (ADD and DEL attach,
 * take over and detach these links only under it; at most lock_timeout_ms:
 * -EAGAIN): plan(paths, pod, i, arg) for each hook i below n_hooks, then
 * pod_moves_apply. 1 when they moved, 0 when all was current or the record
 * names no host veth, or -errno with every one back on its old program.
 */
int pod_moves_run(const struct velo_paths *paths, unsigned lock_timeout_ms,
		  const struct velo_record *record, unsigned n_hooks,
		  int (*plan)(const struct velo_paths *paths, struct pod_moves *pod, unsigned hook,
			      const void *arg),
		  const void *arg);

#endif
