// SPDX-License-Identifier: Apache-2.0
/*
 * Service translation (annotation velo.dev/services: "true", or the
 * conflist's defaults): the cgroup sock_addr programs of
 * bpf/cgroup_sock_addr.bpf.c on the pod's own cgroup, one pinned bpf_link
 * per hook (<bpffs>/links/<host_ifname>_svc_conn4, ...), taken over by a
 * restarted sandbox like the other cgroup features (cgroup/link.h). The
 * Service state comes from velod (velo_svc_* maps); until it has written
 * any, the programs pass every address through. A pod that can't have it
 * stays with kube-proxy, with one log line: never a failed pod. All hooks
 * or none: a pod whose connect is translated must see the VIP back.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "cgroup/link.h"
#include "cgroup/pod.h"
#include "datapath/svc_bpf.h"
#include "features/feature.h"
#include "features/svc.h"

static bool services_wanted(const struct velo_request *request)
{
	return request->config.effective.services;
}

static void unpin_all(const struct velo_request *request)
{
	for (int hook = 0; hook < VELO_SVC_N_HOOKS; hook++)
		cgroup_link_unpin(request, velo_svc_hook_kind(hook));
}

static int fall_back(const struct velo_request *request, const char *why, int err)
{
	pr_warn("services: %s%s%s; pod %s keeps kube-proxy", why, err ? ": " : "",
		err ? strerror(-err) : "", request->record.host_ifname);
	return VELO_FEATURE_FELL_BACK;
}

/* The pod cgroup and the cgroup lock, as cgroup_ctx_open has them, without velo's cgroup_skb group. */
static int ctx_open(struct velo_request *request, struct cgroup_ctx *ctx)
{
	bool had_error = cni_error_is_set();
	int ret;

	memset(ctx, 0, sizeof(*ctx));
	ctx->request = request;
	ctx->cgroup_fd = ctx->lock_fd = -1;
	ret = pod_cgroup_find(request, ctx->path, sizeof(ctx->path));
	if (ret) {
		/* An optimisation: a log line, not the pod's error. */
		if (!had_error)
			cni_error_reset();
		fall_back(request, "the pod's cgroup is unknown", ret);
		return ret;
	}
	ctx->cgroup_fd = open(ctx->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ctx->cgroup_fd < 0) {
		ret = -errno;
		fall_back(request, "open the pod's cgroup", ret);
		return ret;
	}
	ctx->cgroup_id = cgroup_id_of(ctx->path);
	request->record.cgroup_id = ctx->cgroup_id;
	ctx->lock_fd = cgroup_lock(request);
	if (ctx->lock_fd < 0) {
		ret = ctx->lock_fd;
		cgroup_ctx_close(ctx);
		if (ret != -EAGAIN) /* busy: the ADD tries again later (code 11) */
			fall_back(request, "cgroup lock", ret);
		return ret;
	}
	return 0;
}

static int services_attach(struct velo_request *request)
{
	struct velo_svc_bpf bpf;
	struct cgroup_ctx ctx;
	int ret;

	ret = ctx_open(request, &ctx);
	if (ret)
		return ret == -EAGAIN ? ret : VELO_FEATURE_FELL_BACK;
	ret = velo_svc_bpf_open(&request->config.paths, request->config.lock_timeout_ms, &bpf);
	if (ret) {
		cgroup_ctx_close(&ctx);
		if (ret == -EAGAIN)
			return ret; /* the loader lock is busy: try again later */
		return fall_back(request, "BPF objects can't be loaded", ret);
	}
	for (int hook = 0; !ret && hook < VELO_SVC_N_HOOKS; hook++)
		ret = cgroup_link_attach(&ctx, velo_svc_hook_kind(hook), bpf.prog_fds[hook],
					 velo_svc_hook_type(hook));
	velo_svc_bpf_close(&bpf);
	if (ret) {
		unpin_all(request);
		cgroup_ctx_close(&ctx);
		return fall_back(request, "attach failed", ret);
	}
	pr_info("services on cgroup %s (id %llu)", ctx.path, (unsigned long long)ctx.cgroup_id);
	cgroup_ctx_close(&ctx);
	return 0;
}

static int services_detach(struct velo_request *request)
{
	int lock_fd = cgroup_lock(request);

	if (lock_fd < 0)
		return lock_fd;
	unpin_all(request);
	cgroup_unlock(lock_fd);
	return 0;
}

static int services_check(struct velo_request *request)
{
	struct velo_svc_bpf bpf;
	int ret = 0;

	if (velo_svc_bpf_open_pinned(&request->config.paths, &bpf)) {
		cni_error_detail("services: velo's service BPF programs are not pinned");
		return -EIO;
	}
	for (int hook = 0; hook < VELO_SVC_N_HOOKS; hook++)
		if (cgroup_link_check(request, "services", velo_svc_hook_kind(hook),
				      velo_svc_hook_type(hook), bpf.prog_fds[hook], 0))
			ret = -EIO;
	velo_svc_bpf_close(&bpf);
	return ret;
}

/* After a fall back the pod keeps kube-proxy: none of the translation links may be there. */
static int services_check_routed(const struct velo_request *request)
{
	char path[PATH_MAX];
	int ret = 0;

	for (int hook = 0; hook < VELO_SVC_N_HOOKS; hook++)
		if (!velo_bpf_link_path(&request->config.paths, request->record.host_ifname,
					velo_svc_hook_kind(hook), path, sizeof(path)) &&
		    !access(path, F_OK)) {
			cni_error_detail("services: a pod left to kube-proxy has a link (%s)",
					 path);
			ret = -EIO;
		}
	return ret;
}

const struct velo_feature velo_feature_services = {
	.name = "services",
	.bit = VELO_FEATURE_SERVICES,
	.wanted = services_wanted,
	.attach = services_attach,
	.detach = services_detach,
	.check = services_check,
	.check_routed = services_check_routed,
};
