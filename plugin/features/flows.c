// SPDX-License-Identifier: Apache-2.0
/*
 * velo.dev/flows: "true" (or the conflist's defaults). velo_flow_ops (sock_ops)
 * on the pod's own cgroup emits a start and an end event for each of the
 * pod's TCP connections into the node's flow ring (docs/flows.md); with
 * velo.dev/flows-udp too, velo_fl_udp_eg/_in (cgroup_skb, a run per packet)
 * a start for each new UDP 5-tuple. Drops are reported for every pod whatever
 * this says. Observability, not policy: a pod whose cgroup can't be found
 * starts without connection events, with one warning.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "bpf/lib/velo_flow.h"
#include "cgroup/link.h"
#include "datapath/flow_bpf.h"
#include "datapath/pins.h"
#include "features/feature.h"
#include "features/flows.h"

static bool flows_wanted(const struct velo_request *request)
{
	return request->config.effective.flows;
}

/* Link i belongs on this pod: TCP's always, UDP's with velo.dev/flows-udp. */
static bool link_wanted(const struct velo_request *request, enum velo_flow_hook i)
{
	return i == VELO_FLOW_OPS || request->config.effective.flows_udp;
}

/* No pin of link i for this endpoint; else a CHECK detail. */
static int link_absent(const struct velo_request *request, enum velo_flow_hook i, const char *why)
{
	char path[4096];

	if (!velo_bpf_link_path(&request->config.paths, request->record.host_ifname,
				velo_flow_hook_kind(i), path, sizeof(path)) &&
	    !access(path, F_OK)) {
		cni_error_detail("flows: %s has a link (%s)", why, path);
		return -EIO;
	}
	return 0;
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
	/* A link attached before a later one failed is undone by detach (the record has the bit). */
	for (enum velo_flow_hook i = 0; !ret && i < VELO_FLOW_N_HOOKS; i++) {
		if (!link_wanted(request, i))
			continue;
		ret = cgroup_link_attach(&ctx, velo_flow_hook_kind(i), velo_flow_hook_prog(&bpf, i),
					 velo_flow_hook_type(i));
		if (ret)
			cni_fail(ret, VELO_ERR_FEATURE, "flows: attach %s to cgroup %s: %s",
				 velo_flow_hook_kind(i), ctx.path, strerror(-ret));
	}
	/* Only once its program runs may the pod's clients be the ones that report. */
	if (!ret) {
		ret = velo_flow_pods_add(&bpf, &request->record);
		if (ret)
			cni_fail(ret, VELO_ERR_FEATURE, "flows: add the pod's addresses to %s: %s",
				 VELO_MAP_FLOW_PODS, strerror(-ret));
	}
	if (!ret)
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
	/* Its peers report the pod's connections again before its program goes. */
	velo_flow_pods_remove(&request->config.paths, &request->record);
	for (enum velo_flow_hook i = 0; i < VELO_FLOW_N_HOOKS; i++)
		cgroup_link_unpin(request, velo_flow_hook_kind(i));
	cgroup_unlock(lock_fd);
	return 0;
}

static int flows_check(struct velo_request *request)
{
	struct velo_flow_bpf bpf;
	int ret = 0;

	if (velo_flow_bpf_open_pinned(&request->config.paths, &bpf)) {
		cni_error_detail("flows: the connection-event programs are not pinned");
		return -EIO;
	}
	for (enum velo_flow_hook i = 0; i < VELO_FLOW_N_HOOKS; i++) {
		if (!link_wanted(request, i)) {
			if (link_absent(request, i, "a pod without velo.dev/flows-udp"))
				ret = -EIO;
		} else if (cgroup_link_check(request, "flows", velo_flow_hook_kind(i),
					     velo_flow_hook_type(i), velo_flow_hook_prog(&bpf, i),
					     0)) {
			ret = -EIO;
		}
	}
	if (!velo_flow_pods_have(&bpf, &request->record)) {
		cni_error_detail("flows: the pod's addresses are not all in %s",
				 VELO_MAP_FLOW_PODS);
		ret = -EIO;
	}
	velo_flow_bpf_close(&bpf);
	return ret;
}

/* ADD found no pod cgroup: no link of this endpoint may exist. */
static int flows_check_routed(const struct velo_request *request)
{
	for (enum velo_flow_hook i = 0; i < VELO_FLOW_N_HOOKS; i++)
		if (link_absent(request, i, "a pod without connection events"))
			return -EIO;
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
