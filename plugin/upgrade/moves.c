// SPDX-License-Identifier: Apache-2.0
/*
 * One pod's attachments moved to new programs as a unit: planned with an fd
 * of each old program held, applied in order, rolled back in reverse.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "base/log.h"
#include "cgroup/link.h"
#include "datapath/pins.h"
#include "datapath/prog_info.h"
#include "upgrade/moves.h"

int pod_moves_plan(struct pod_moves *pod, const char *kind, int link_fd, unsigned old_prog_id,
		   int new_prog_fd, int (*move_to)(const struct velo_record *record, int prog_fd))
{
	int old_fd, ret;

	if (old_prog_id == velo_prog_id(new_prog_fd)) {
		if (link_fd >= 0)
			close(link_fd);
		return 0;
	}
	old_fd = bpf_prog_get_fd_by_id(old_prog_id);
	ret = old_fd < 0 ? -errno : velo_prog_same_maps(old_fd, new_prog_fd);
	if (!ret && pod->n >= POD_MOVES_MAX)
		ret = -E2BIG;
	if (ret) {
		if (ret == -EXDEV)
			pr_warn("upgrade: %s of %s: this generation's program uses other maps; "
				"the pod keeps its programs until it is re-created",
				kind, pod->record->host_ifname);
		if (old_fd >= 0)
			close(old_fd);
		if (link_fd >= 0)
			close(link_fd);
		return ret;
	}
	pod->moves[pod->n++] = (struct pod_move){ kind, link_fd, old_fd, new_prog_fd, move_to };
	return 0;
}

/* A link whose cgroup or veth is gone runs nothing any more: nothing to move (DEL unpins it). */
static bool link_detached(const struct bpf_link_info *info)
{
	/* A tcx link's info starts with the ifindex, as an XDP link's does. */
	return info->type == BPF_LINK_TYPE_CGROUP ? !info->cgroup.cgroup_id : !info->xdp.ifindex;
}

int pod_moves_plan_pin(const struct velo_paths *paths, struct pod_moves *pod, const char *kind,
		       int new_prog_fd)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, ret;

	if (velo_bpf_link_path(paths, pod->record->host_ifname, kind, path, sizeof(path)))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (link_detached(&info)) {
		close(fd);
		return 0;
	}
	return pod_moves_plan(pod, kind, fd, info.prog_id, new_prog_fd, NULL);
}

static int move_to(const struct velo_record *record, const struct pod_move *move, int prog_fd)
{
	if (move->link_fd < 0)
		return move->move_to(record, prog_fd);
	return bpf_link_update(move->link_fd, prog_fd, NULL) ? -errno : 0;
}

int pod_moves_apply(struct pod_moves *pod)
{
	const struct velo_record *record = pod->record;
	int ret = 0;
	unsigned i;

	for (i = 0; i < pod->n && !ret; i++)
		ret = move_to(record, &pod->moves[i], pod->moves[i].new_prog_fd);
	if (!ret)
		return pod->n ? 1 : 0;
	pr_warn("upgrade: %s of %s can't move: %s", pod->moves[i - 1].kind, record->host_ifname,
		strerror(-ret));
	/* i - 1 failed and stays where it was. */
	while (--i > 0) {
		const struct pod_move *move = &pod->moves[i - 1];

		if (move_to(record, move, move->old_prog_fd))
			pr_warn("upgrade: %s of %s stays on the new program while the others "
				"went back (half moved; the next pass moves the rest)",
				move->kind, record->host_ifname);
	}
	return ret;
}

void pod_moves_close(struct pod_moves *pod)
{
	for (unsigned i = 0; i < pod->n; i++) {
		if (pod->moves[i].link_fd >= 0)
			close(pod->moves[i].link_fd);
		close(pod->moves[i].old_prog_fd);
	}
	pod->n = 0;
}

int pod_moves_run(const struct velo_paths *paths, unsigned lock_timeout_ms,
		  const struct velo_record *record, unsigned n_hooks,
		  int (*plan)(const struct velo_paths *paths, struct pod_moves *pod, unsigned hook,
			      const void *arg),
		  const void *arg)
{
	struct pod_moves pod = { .record = record };
	int lock_fd, ret = 0;

	if (!record->host_ifname[0])
		return 0;
	lock_fd = cgroup_lock_at(paths, lock_timeout_ms);
	if (lock_fd < 0)
		return lock_fd;
	for (unsigned i = 0; i < n_hooks && !ret; i++)
		ret = plan(paths, &pod, i, arg);
	if (!ret)
		ret = pod_moves_apply(&pod);
	pod_moves_close(&pod);
	cgroup_unlock(lock_fd);
	return ret;
}
