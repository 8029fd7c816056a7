// SPDX-License-Identifier: Apache-2.0
/*
 * Moving one pod's service translation links (<bpffs>/links/<ifname>_svc_*)
 * to this generation's programs: all or none, as cgroup_upgrade.c does for
 * the other cgroup links. A program of this generation that uses other maps
 * than the pod's (a layout change) leaves the pod where it is.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "base/log.h"
#include "datapath/bpf_pins.h"
#include "datapath/prog_info.h"
#include "cgroup/link.h"
#include "upgrade/svc_upgrade.h"

struct move {
	int link_fd;
	int old_prog_fd;
	int new_prog_fd;
};

/* The hook's move into moves[*n], when its link runs another program: 0 or -errno. */
static int plan(const struct velo_paths *paths, const struct velo_record *record, int hook,
		int new_prog_fd, struct move *moves, unsigned *n)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, old_fd, ret;

	if (velo_bpf_link_path(paths, record->host_ifname, velo_svc_hook_kind(hook), path,
			       sizeof(path)))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno; /* the pod fell back to kube-proxy */
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (!info.cgroup.cgroup_id || info.prog_id == velo_prog_id(new_prog_fd)) {
		close(fd); /* the cgroup is gone (DEL unpins it), or current */
		return 0;
	}
	old_fd = bpf_prog_get_fd_by_id(info.prog_id);
	ret = old_fd < 0 ? -errno : velo_prog_same_maps(old_fd, new_prog_fd);
	if (ret) {
		if (old_fd >= 0)
			close(old_fd);
		close(fd);
		return ret;
	}
	moves[(*n)++] = (struct move){ fd, old_fd, new_prog_fd };
	return 0;
}

int velo_svc_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
		     const struct velo_record *record, const struct velo_svc_bpf *bpf)
{
	struct move moves[VELO_SVC_N_HOOKS];
	unsigned n = 0, i;
	int lock_fd, ret = 0;

	if (!record->host_ifname[0])
		return 0;
	/* ADD and DEL attach, take over and detach these links only under the cgroup lock. */
	lock_fd = cgroup_lock_at(paths, lock_timeout_ms);
	if (lock_fd < 0)
		return lock_fd;
	for (int hook = 0; hook < VELO_SVC_N_HOOKS && !ret; hook++)
		ret = plan(paths, record, hook, bpf->prog_fds[hook], moves, &n);
	if (ret == -EXDEV)
		pr_warn("upgrade: services of %s: this generation's programs use other maps; the "
			"pod keeps its programs until it is re-created",
			record->host_ifname);
	for (i = 0; !ret && i < n; i++)
		if (bpf_link_update(moves[i].link_fd, moves[i].new_prog_fd, NULL))
			ret = -errno;
	if (ret && i) {
		pr_warn("upgrade: services of %s can't move: %s", record->host_ifname,
			strerror(-ret));
		/* i - 1 failed and stays where it was; the ones before go back. */
		while (--i > 0)
			if (bpf_link_update(moves[i - 1].link_fd, moves[i - 1].old_prog_fd, NULL))
				pr_warn("upgrade: a services link of %s stays on the new program "
					"(half moved; the next pass moves the rest)",
					record->host_ifname);
	}
	for (unsigned j = 0; j < n; j++) {
		close(moves[j].link_fd);
		close(moves[j].old_prog_fd);
	}
	cgroup_unlock(lock_fd);
	return ret ? ret : n ? 1 : 0;
}
