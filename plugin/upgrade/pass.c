// SPDX-License-Identifier: Apache-2.0
/* Moving pods to this generation's programs, then unpinning the old ones. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/lock.h"
#include "base/log.h"
#include "bpf/lib/velo_shared.h"
#include "bpf/lib/velo_sockmap.h"
#include "datapath/flow_bpf.h"
#include "datapath/policy_bpf.h"
#include "datapath/sockmap_bpf.h"
#include "datapath/sockmap_probe.h"
#include "datapath/svc_bpf.h"
#include "state/state.h"
#include "upgrade/cgroup.h"
#include "upgrade/fastpath.h"
#include "upgrade/flows.h"
#include "upgrade/pass.h"
#include "upgrade/policy.h"
#include "upgrade/sockmap.h"
#include "upgrade/svc.h"

/*
 * Map pins no program of this release uses and none supersedes by name: the
 * flow ring and its loss counter grew (_v2), the per-socket side table went.
 */
static const char *const retired_maps[] = { "velo_flow_rb_v1", "velo_fl_lost_v1",
					    "velo_fl_tcp_v1" };

static bool retired(const char *name)
{
	for (size_t i = 0; i < sizeof(retired_maps) / sizeof(retired_maps[0]); i++)
		if (!strcmp(name, retired_maps[i]))
			return true;
	return false;
}

/* Where velo pinned every group's programs before generations. */
static const char *const legacy_progs[] = {
	VELO_PROG_TC_INGRESS, VELO_PROG_XDP_HOST,   VELO_PROG_XDP_DST,	  VELO_PROG_CG_ACCT_IN,
	VELO_PROG_CG_ACCT_EG, VELO_PROG_CG_DENY_EG, VELO_PROG_CG_SOCKOPT, VELO_PROG_TC_DENY,
	VELO_PROG_SOCKOPS,    VELO_PROG_SK_MSG,
};

static int unpin(const char *path, bool remove, unsigned *count)
{
	if (access(path, F_OK))
		return 0;
	(*count)++;
	if (remove && unlink(path)) {
		pr_warn("upgrade: unpin %s: %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}

/* A generation dir: its pins, then itself. */
static int unpin_dir(const char *path, bool remove, unsigned *count)
{
	DIR *dir = opendir(path);
	struct dirent *entry;
	char child[PATH_MAX];
	int ret = 0;

	if (!dir)
		return -errno;
	while ((entry = readdir(dir)))
		if (entry->d_name[0] != '.' && snprintf(child, sizeof(child), "%s/%s", path,
							entry->d_name) < (int)sizeof(child))
			ret = unpin(child, remove, count) ?: ret;
	closedir(dir);
	if (remove && rmdir(path) && !ret)
		ret = -errno;
	return ret;
}

/* Counts (and with remove, unpins) what no program of this generation uses. */
static int old_pins(const struct velo_paths *paths, bool remove, unsigned *count)
{
	char current[NAME_MAX + 1], path[PATH_MAX];
	DIR *dir = opendir(paths->bpffs_dir);
	struct dirent *entry;
	int ret = 0;

	*count = 0;
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	snprintf(current, sizeof(current), VELO_BPF_GEN_PREFIX "%s", velo_bpf_generation());
	while ((entry = readdir(dir))) {
		const char *name = entry->d_name;

		if (snprintf(path, sizeof(path), "%s/%s", paths->bpffs_dir, name) >=
		    (int)sizeof(path))
			continue;
		if (!strncmp(name, VELO_BPF_GEN_PREFIX, strlen(VELO_BPF_GEN_PREFIX)) &&
		    strcmp(name, current)) {
			ret = unpin_dir(path, remove, count) ?: ret;
		} else if (!strcmp(name, VELO_BPF_PROGS_DIR)) {
			for (size_t i = 0; i < sizeof(legacy_progs) / sizeof(legacy_progs[0]); i++)
				if (snprintf(path, sizeof(path), "%s/%s/%s", paths->bpffs_dir, name,
					     legacy_progs[i]) < (int)sizeof(path))
					ret = unpin(path, remove, count) ?: ret;
		} else if (velo_map_pin_superseded(name) || retired(name)) {
			ret = unpin(path, remove, count) ?: ret;
		}
	}
	closedir(dir);
	return ret;
}

enum group_kind {
	GROUP_VETH,
	GROUP_CGROUP,
	GROUP_SOCKMAP,
	GROUP_SVC,
	GROUP_POLICY,
	GROUP_FLOWS,
	N_GROUPS
};

static const char *const group_names[] = {
	[GROUP_VETH] = "fast-path", [GROUP_CGROUP] = "cgroup", [GROUP_SOCKMAP] = "sockmap",
	[GROUP_SVC] = "services",   [GROUP_POLICY] = "policy", [GROUP_FLOWS] = "flows",
};

/* A group's programs, opened on first use. */
struct group_fds {
	int state; /* 0 not yet, 1 open, 2 nothing of the group pinned, else -errno */
	union {
		struct velo_bpf veth;
		struct velo_bpf_cgroup cgroup;
		struct velo_sockmap_bpf sockmap;
		struct velo_svc_bpf svc;
		struct velo_policy_bpf policy;
		struct velo_flow_bpf flows;
	};
};

struct pass {
	const struct velo_paths *paths;
	unsigned lock_timeout_ms;
	bool old; /* old pins exist: load this generation's programs when missing */
	struct group_fds groups[N_GROUPS]; /* by enum group_kind */
	int msg_moved; /* the node's sk_msg link: 0 not yet, 1 done, else -errno */
	struct velo_upgrade *out;
	int error; /* of the first group that couldn't be opened */
};

static int group_open(struct pass *pass, enum group_kind kind, struct group_fds *group)
{
	const struct velo_paths *paths = pass->paths;
	unsigned timeout = pass->lock_timeout_ms;
	struct velo_sockmap_features features;

	switch (kind) {
	case GROUP_VETH:
		return pass->old ? velo_bpf_open(paths, timeout, &group->veth)
				 : velo_bpf_open_pinned(paths, &group->veth);
	case GROUP_CGROUP:
		return pass->old ? velo_bpf_cgroup_open(paths, timeout, &group->cgroup)
				 : velo_bpf_cgroup_open_pinned(paths, &group->cgroup);
	case GROUP_SOCKMAP:
		if (!pass->old)
			return velo_sockmap_bpf_open_pinned(paths, &group->sockmap);
		velo_sockmap_probe(paths, &features);
		return velo_sockmap_bpf_open(paths, timeout, &features, &group->sockmap);
	case GROUP_SVC:
		return pass->old ? velo_svc_bpf_open(paths, timeout, &group->svc)
				 : velo_svc_bpf_open_pinned(paths, &group->svc);
	case GROUP_POLICY:
		return pass->old ? velo_policy_bpf_open(paths, timeout, &group->policy)
				 : velo_policy_bpf_open_pinned(paths, &group->policy);
	case GROUP_FLOWS:
		return pass->old ? velo_flow_bpf_open(paths, timeout, &group->flows)
				 : velo_flow_bpf_open_pinned(paths, &group->flows);
	case N_GROUPS:
		break;
	}
	return -EINVAL;
}

/*
 * A group's programs, opened once per pass: 1 when open, 0 when nothing of
 * the group is pinned and nothing is old (no pod has anything of it to move),
 * or -errno.
 */
static int group_get(struct pass *pass, enum group_kind kind)
{
	struct group_fds *group = &pass->groups[kind];
	int ret;

	if (!group->state) {
		ret = group_open(pass, kind, group);
		group->state = !ret ? 1 : ret == -ENOENT && !pass->old ? 2 : ret;
		if (group->state < 0) {
			pr_warn("upgrade: this generation's %s programs can't be opened: %s",
				group_names[kind], strerror(-ret));
			pass->error = pass->error ?: ret;
		}
	}
	return group->state == 2 ? 0 : group->state;
}

/*
 * The node's sk_msg link, once per pass before the first pod's sock_ops: 1
 * when it moved, 0 when current, or -errno for every pod of the pass (the old
 * generation stays pinned). A program with other maps leaves it where it is.
 */
static int sockmap_msg_move(struct pass *pass)
{
	int ret;

	if (pass->msg_moved)
		return pass->msg_moved < 0 ? pass->msg_moved : 0;
	/* Under the BPF loader lock, as a generation's first load attaches it. */
	ret = velo_sockmap_msg_upgrade(pass->paths, pass->lock_timeout_ms,
				       &pass->groups[GROUP_SOCKMAP].sockmap);
	if (ret == -EXDEV)
		pr_warn("upgrade: the sk_msg link stays on a program that uses other maps than "
			"this generation's");
	else if (ret < 0)
		pr_warn("upgrade: the sk_msg link can't move: %s", strerror(-ret));
	else if (ret)
		pr_info("upgrade: the sk_msg link moved to BPF generation %s",
			velo_bpf_generation());
	pass->msg_moved = ret < 0 ? ret : 1;
	return ret;
}

/*
 * One endpoint's sock_ops link, after the node's sk_msg link. A pod without
 * one fell back to the routed path at ADD: nothing to move, nothing to load.
 */
static int sockmap_upgrade(struct pass *pass, const struct velo_record *record)
{
	char path[PATH_MAX];
	int got;

	if (velo_sockmap_link_path(pass->paths, record->host_ifname, path, sizeof(path)) ||
	    access(path, F_OK))
		return 0;
	got = group_get(pass, GROUP_SOCKMAP);
	if (got <= 0)
		return got;
	got = sockmap_msg_move(pass);
	if (got < 0)
		return got;
	return velo_sockmap_upgrade(pass->paths, record, &pass->groups[GROUP_SOCKMAP].sockmap);
}

/* One group of an endpoint: 1 moved, 0 current (or its group isn't loaded), or -errno. */
static int group_upgrade(struct pass *pass, const struct velo_record *record, enum group_kind group)
{
	int got = group_get(pass, group);

	if (got <= 0)
		return got;
	switch (group) {
	case GROUP_VETH:
		return velo_fastpath_upgrade(pass->paths, record, &pass->groups[group].veth);
	case GROUP_CGROUP:
		return velo_cgroup_upgrade(pass->paths, pass->lock_timeout_ms, record,
					   &pass->groups[group].cgroup);
	case GROUP_SVC:
		return velo_svc_upgrade(pass->paths, pass->lock_timeout_ms, record,
					&pass->groups[group].svc);
	case GROUP_POLICY:
		return velo_policy_upgrade(pass->paths, pass->lock_timeout_ms, record,
					   &pass->groups[group].policy);
	case GROUP_FLOWS:
		return velo_flows_upgrade(pass->paths, pass->lock_timeout_ms, record,
					  &pass->groups[group].flows);
	default:
		return -EINVAL; /* the sockmap group moves with sockmap_upgrade */
	}
}

/* One endpoint's groups: 1 when something moved, 0 when all was current, or the first -errno. */
static int upgrade_groups(struct pass *pass, const struct velo_record *record)
{
	int got[6] = { 0 }, moved = 0, ret = 0;

	if (record->features & VELO_FEATURE_FASTPATH)
		got[0] = group_upgrade(pass, record, GROUP_VETH);
	/* A pod cgroup is recorded only where velo attached cgroup programs to it. */
	if (record->cgroup_id)
		got[1] = group_upgrade(pass, record, GROUP_CGROUP);
	if (record->features & VELO_FEATURE_SOCKMAP)
		got[2] = sockmap_upgrade(pass, record);
	if (record->features & VELO_FEATURE_SERVICES)
		got[3] = group_upgrade(pass, record, GROUP_SVC);
	/* velod attaches policy programs, selected pod or not: pins or filters say where. */
	if (velo_policy_hook_attached(pass->paths, record, VELO_POL_HOOK_FROM) ||
	    velo_policy_hook_attached(pass->paths, record, VELO_POL_HOOK_TO) ||
	    velo_policy_deliver_attached(pass->paths, record))
		got[4] = group_upgrade(pass, record, GROUP_POLICY);
	if (record->features & VELO_FEATURE_FLOWS)
		got[5] = group_upgrade(pass, record, GROUP_FLOWS);
	for (unsigned i = 0; i < sizeof(got) / sizeof(got[0]); i++) {
		ret = ret ?: (got[i] < 0 ? got[i] : 0);
		moved |= got[i] > 0;
	}
	return ret ? ret : moved;
}

/* Under the attachment lock, as ADD and DEL change an endpoint only under it. */
static int upgrade_record(const struct velo_record *listed, void *arg)
{
	struct pass *pass = arg;
	struct velo_record record = { 0 };
	char path[PATH_MAX];
	int fd, ret;

	/* Not only pods with features: velod may have put pol_deliver on any pod. */
	if (listed->phase != VELO_PHASE_READY)
		return 0;
	if (state_lock_path(pass->paths, listed->network, listed->container_id, listed->ifname,
			    path, sizeof(path)))
		return 0;
	fd = lock_try(path);
	if (fd < 0) {
		pass->out->busy += fd == -EWOULDBLOCK;
		pass->out->failed += fd != -EWOULDBLOCK;
		return 0;
	}
	/* Read again under the lock: a DEL may have finished meanwhile. */
	ret = state_record_read(pass->paths, listed->network, listed->container_id, listed->ifname,
				&record);
	if (ret) {
		lock_release_unlink(fd, path);
		return 0;
	}
	ret = upgrade_groups(pass, &record);
	if (ret == -EAGAIN) {
		pass->out->busy++; /* the cgroup lock */
	} else if (ret < 0) {
		pass->out->failed++;
		pr_warn("upgrade: %s/%s (veth %s) stays on its old programs: %s",
			record.container_id, record.ifname, record.host_ifname, strerror(-ret));
	} else if (ret) {
		pass->out->moved++;
		pr_info("upgrade: %s/%s (veth %s) moved to BPF generation %s", record.container_id,
			record.ifname, record.host_ifname, velo_bpf_generation());
	}
	state_record_free(&record);
	lock_release(fd);
	return 0;
}

static int upgrade_network(const char *network, void *arg)
{
	struct pass *pass = arg;

	return state_record_foreach(pass->paths, network, upgrade_record, pass);
}

static void group_put(struct pass *pass, enum group_kind kind)
{
	struct group_fds *group = &pass->groups[kind];

	if (group->state != 1)
		return;
	if (kind == GROUP_CGROUP)
		velo_bpf_cgroup_close(&group->cgroup);
	else if (kind == GROUP_SOCKMAP)
		velo_sockmap_bpf_close(&group->sockmap);
	else if (kind == GROUP_SVC)
		velo_svc_bpf_close(&group->svc);
	else if (kind == GROUP_POLICY)
		velo_policy_bpf_close(&group->policy);
	else if (kind == GROUP_FLOWS)
		velo_flow_bpf_close(&group->flows);
	else
		velo_bpf_close(&group->veth);
}

int velo_bpf_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
		     struct velo_upgrade *out)
{
	struct pass pass = { .paths = paths, .lock_timeout_ms = lock_timeout_ms, .out = out };
	unsigned old;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = old_pins(paths, false, &old);
	if (ret)
		return ret;
	pass.old = old > 0;
	ret = state_network_foreach(paths, upgrade_network, &pass);
	for (unsigned kind = 0; kind < N_GROUPS; kind++)
		group_put(&pass, kind);
	ret = ret ?: pass.error;
	if (ret || out->busy || out->failed)
		return ret; /* the old programs stay until every pod has moved */
	ret = old_pins(paths, true, &out->unpinned);
	if (out->moved || out->unpinned)
		pr_info("upgrade: BPF generation %s: %u endpoint(s) moved, %u old pin(s) removed",
			velo_bpf_generation(), out->moved, out->unpinned);
	return ret;
}
