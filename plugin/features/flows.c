// SPDX-License-Identifier: Apache-2.0
/*
 * velo.dev/flows: "true" (or the conflist's defaults). velo_flow_ops (sock_ops)
 * on the pod's own cgroup emits a start and an end event for each of the
 * pod's TCP connections into the node's flow ring (docs/flows.md). Drops are
 * reported for every pod whatever this says. Observability, not policy: a
 * pod whose cgroup can't be found starts without connection events, with one
 * warning.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "cgroup/link.h"
#include "datapath/flow_bpf.h"
#include "datapath/pins.h"
#include "features/feature.h"
#include "features/flows.h"

#define KIND_OPS "flow_ops"

static bool flows_wanted(const struct velo_request *request)
{
	return request->config.effective.flows;
}

static int flows_attach(struct velo_request *request)
{
	struct velo_flow_bpf bpf;
	struct cgroup_ctx ctx;
	bool had_error;
	int ret;

	had_error = cni_error_is_set();
	ret = cgroup_ctx_open(request, "flows", &ctx);
	if (ret == -ENOENT && !ctx.path[0] && !had_error) {
		cni_error_reset();
		pr_warn("flows: no pod cgroup; pod %s starts without connection events",
			request->record.host_ifname);
		return VELO_FEATURE_FELL_BACK;
	}
	if (ret)
		return ret;
	ret = velo_flow_bpf_open(&request->config.paths, request->config.lock_timeout_ms, &bpf);
	if (ret) {
		cni_fail(ret, VELO_ERR_FEATURE, "flows: load the connection-event program: %s",
			 strerror(-ret));
		cgroup_ctx_close(&ctx);
		return ret;
	}
	ret = cgroup_link_attach(&ctx, KIND_OPS, bpf.ops_fd, BPF_CGROUP_SOCK_OPS);
	if (ret)
		cni_fail(ret, VELO_ERR_FEATURE, "flows: attach to cgroup %s: %s", ctx.path,
			 strerror(-ret));
	else
		pr_info("flows: connection events on cgroup %s", ctx.path);
	velo_flow_bpf_close(&bpf);
	cgroup_ctx_close(&ctx);
	return ret;
}

static int flows_detach(struct velo_request *request)
{
	int lock_fd = cgroup_lock(request);

	if (lock_fd < 0)
		return lock_fd;
	cgroup_link_unpin(request, KIND_OPS);
	cgroup_unlock(lock_fd);
	return 0;
}

static int flows_check(struct velo_request *request)
{
	struct velo_flow_bpf bpf;
	int ret;

	if (velo_flow_bpf_open_pinned(&request->config.paths, &bpf)) {
		cni_error_detail("flows: the connection-event program is not pinned");
		return -EIO;
	}
	ret = cgroup_link_check(request, "flows", KIND_OPS, BPF_CGROUP_SOCK_OPS, bpf.ops_fd, 0)
		      ? -EIO
		      : 0;
	velo_flow_bpf_close(&bpf);
	return ret;
}

/* ADD found no pod cgroup: no link of this endpoint may exist. */
static int flows_check_routed(const struct velo_request *request)
{
	char path[4096];

	if (!velo_bpf_link_path(&request->config.paths, request->record.host_ifname, KIND_OPS, path,
				sizeof(path)) &&
	    !access(path, F_OK)) {
		cni_error_detail("flows: a pod without connection events has a link (%s)", path);
		return -EIO;
	}
	return 0;
}

const struct velo_feature velo_feature_flows = {
	.name = "flows",
	.bit = VELO_FEATURE_FLOWS,
	.wanted = flows_wanted,
	.attach = flows_attach,
	.detach = flows_detach,
	.check = flows_check,
	.check_routed = flows_check_routed,
};
