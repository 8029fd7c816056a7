// SPDX-License-Identifier: Apache-2.0
/*
 * Moving one pod's cgroup programs to this generation's: its pinned cgroup
 * links and velo_tc_deny on its host veth (a tcx link, else a clsact filter).
 * All move or none (moves.h).
 */
#include <errno.h>
#include <stddef.h>

#include "datapath/prog_info.h"
#include "datapath/tc_attach.h"
#include "upgrade/cgroup.h"
#include "upgrade/moves.h"

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
_Static_assert(N_HOOKS <= POD_MOVES_MAX, "every hook fits one pod's moves");

static int hook_prog_fd(const struct velo_bpf_cgroup *bpf, const struct cgroup_hook *hook)
{
	return *(const int *)((const char *)bpf + hook->prog_offset);
}

/* Kernels without tcx: velo_tc_deny is a clsact filter on the host veth, which has no pin. */
static int tc_deny_move_to(const struct velo_record *record, int prog_fd)
{
	return velo_clsact_ingress_attach(prog_fd, record->host_ifindex, VELO_TC_DENY_HANDLE,
					  VELO_TC_DENY_PRIORITY);
}

/* The pod's attachment of hook: none (0), planned, or -errno. */
static int plan_hook(const struct velo_paths *paths, struct pod_moves *pod,
		     const struct cgroup_hook *hook, int new_prog_fd)
{
	const struct velo_record *record = pod->record;
	unsigned clsact_id;
	int ret;

	ret = pod_moves_plan_pin(paths, pod, hook->kind, new_prog_fd);
	if (ret != -ENOENT)
		return ret;
	if (hook != &hooks[TC_DENY_HOOK] || !velo_host_veth_is_ours(record))
		return 0;
	clsact_id = velo_clsact_prog_id(record->host_ifindex, VELO_TC_DENY_HANDLE,
					VELO_TC_DENY_PRIORITY);
	return clsact_id ? pod_moves_plan(pod, hook->kind, -1, clsact_id, new_prog_fd,
					  tc_deny_move_to)
			 : 0;
}

static int plan_hook_of(const struct velo_paths *paths, struct pod_moves *pod, unsigned i,
			const void *bpf)
{
	return plan_hook(paths, pod, &hooks[i], hook_prog_fd(bpf, &hooks[i]));
}

int velo_cgroup_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
			const struct velo_record *record, const struct velo_bpf_cgroup *bpf)
{
	return pod_moves_run(paths, lock_timeout_ms, record, N_HOOKS, plan_hook_of, bpf);
}
