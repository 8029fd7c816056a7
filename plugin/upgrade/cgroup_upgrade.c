// SPDX-License-Identifier: Apache-2.0
/*
 * Moving one pod's cgroup programs to this generation's: its pinned cgroup
 * links and velo_tc_deny on its host veth (a tcx link, else a clsact filter).
 * All move or none: a move that fails puts the ones already moved back on the
 * programs they ran, which the pass holds fds of until then.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "datapath/prog_info.h"
#include "upgrade/cgroup_upgrade.h"
#include "cgroup/link.h"
#include "base/log.h"
#include "datapath/tc_attach.h"

/* The link kinds of accounting.c, egress_policy.c, tcp_congestion.c and egress_tc.c. */
static const struct cgroup_hook {
	const char *kind;
	size_t prog_offset; /* in struct velo_bpf_cgroup */
} hooks[] = {
	{ "cg_acct_in", offsetof(struct velo_bpf_cgroup, acct_in_fd) },
	{ "cg_acct_eg", offsetof(struct velo_bpf_cgroup, acct_eg_fd) },
	{ "cg_deny_eg", offsetof(struct velo_bpf_cgroup, deny_eg_fd) },
	{ "cg_sockopt", offsetof(struct velo_bpf_cgroup, sockopt_fd) },
	{ "tc_deny", offsetof(struct velo_bpf_cgroup, tc_deny_fd) },
};
#define N_HOOKS (sizeof(hooks) / sizeof(hooks[0]))
#define TC_DENY_HOOK (N_HOOKS - 1)

/* One attachment to move: a pinned link, or (link_fd -1) the clsact filter of velo_tc_deny. */
struct move {
	const char *kind;
	int link_fd;
	int old_prog_fd;
	int new_prog_fd;
};

struct pod_moves {
	const struct velo_record *record;
	struct move moves[N_HOOKS];
	unsigned n;
};

static int hook_prog_fd(const struct velo_bpf_cgroup *bpf, const struct cgroup_hook *hook)
{
	return *(const int *)((const char *)bpf + hook->prog_offset);
}

/* Adds a move off old_prog_id unless it runs new_prog_fd already; takes link_fd either way. */
static int plan(struct pod_moves *pod, const char *kind, int link_fd, unsigned old_prog_id,
		int new_prog_fd)
{
	struct move *move = &pod->moves[pod->n];
	int old_fd, ret;

	if (old_prog_id == velo_prog_id(new_prog_fd)) {
		if (link_fd >= 0)
			close(link_fd);
		return 0;
	}
	old_fd = bpf_prog_get_fd_by_id(old_prog_id);
	ret = old_fd < 0 ? -errno : velo_prog_same_maps(old_fd, new_prog_fd);
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
	*move = (struct move){ kind, link_fd, old_fd, new_prog_fd };
	pod->n++;
	return 0;
}

/* A link whose cgroup or veth is gone runs nothing any more: nothing to move (DEL unpins it). */
static bool link_detached(const struct bpf_link_info *info)
{
	/* A tcx link's info starts with the ifindex, as an XDP link's does. */
	return info->type == BPF_LINK_TYPE_CGROUP ? !info->cgroup.cgroup_id : !info->xdp.ifindex;
}

/* The pod's attachment of hook: none (0), planned, or -errno. */
static int plan_hook(const struct velo_paths *paths, struct pod_moves *pod,
		     const struct cgroup_hook *hook, int new_prog_fd)
{
	const struct velo_record *record = pod->record;
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	unsigned clsact_id;
	int fd;

	if (velo_bpf_link_path(paths, record->host_ifname, hook->kind, path, sizeof(path)))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
			int ret = -errno;

			close(fd);
			return ret;
		}
		if (link_detached(&info)) {
			close(fd);
			return 0;
		}
		return plan(pod, hook->kind, fd, info.prog_id, new_prog_fd);
	}
	if (errno != ENOENT)
		return -errno;
	/* Kernels without tcx: velo_tc_deny is a clsact filter, which has no pin. */
	if (hook != &hooks[TC_DENY_HOOK] || !velo_host_veth_is_ours(record))
		return 0;
	clsact_id = velo_clsact_prog_id(record->host_ifindex, VELO_TC_DENY_HANDLE,
					VELO_TC_DENY_PRIORITY);
	return clsact_id ? plan(pod, hook->kind, -1, clsact_id, new_prog_fd) : 0;
}

static int move_to(const struct velo_record *record, const struct move *move, int prog_fd)
{
	if (move->link_fd < 0)
		return velo_clsact_ingress_attach(prog_fd, record->host_ifindex,
						  VELO_TC_DENY_HANDLE, VELO_TC_DENY_PRIORITY);
	return bpf_link_update(move->link_fd, prog_fd, NULL) ? -errno : 0;
}

/* Every planned move, or none: the ones done go back when one fails. */
static int apply(struct pod_moves *pod)
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
		const struct move *move = &pod->moves[i - 1];

		if (move_to(record, move, move->old_prog_fd))
			pr_warn("upgrade: %s of %s stays on the new program while the others "
				"went back (half moved; the next pass moves the rest)",
				move->kind, record->host_ifname);
	}
	return ret;
}

static void pod_moves_close(struct pod_moves *pod)
{
	for (unsigned i = 0; i < pod->n; i++) {
		if (pod->moves[i].link_fd >= 0)
			close(pod->moves[i].link_fd);
		close(pod->moves[i].old_prog_fd);
	}
	pod->n = 0;
}

int velo_cgroup_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
			const struct velo_record *record, const struct velo_bpf_cgroup *bpf)
{
	struct pod_moves pod = { .record = record };
	int lock_fd, ret = 0;

	if (!record->host_ifname[0])
		return 0;
	/* ADD and DEL attach, take over and detach these links only under the cgroup lock. */
	lock_fd = cgroup_lock_at(paths, lock_timeout_ms);
	if (lock_fd < 0)
		return lock_fd;
	for (unsigned i = 0; i < N_HOOKS && !ret; i++)
		ret = plan_hook(paths, &pod, &hooks[i], hook_prog_fd(bpf, &hooks[i]));
	if (!ret)
		ret = apply(&pod);
	pod_moves_close(&pod);
	cgroup_unlock(lock_fd);
	return ret;
}
