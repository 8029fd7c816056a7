// SPDX-License-Identifier: Apache-2.0
/*
 * velo.dev/accounting: "true". velo_cg_acct_in and velo_cg_acct_eg on the
 * pod's own cgroup count packets and L3 bytes per direction into the pod
 * cgroup's storage in velo_cg_cnt_v1 (read by cgroup id). Observability,
 * not policy: a pod whose cgroup can't be found starts uncounted, with one
 * warning, and its record says so (docs/annotations.md).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "cgroup/link.h"
#include "features/accounting.h"
#include "features/feature.h"

#define KIND_IN "cg_acct_in"
#define KIND_EG "cg_acct_eg"

static bool accounting_wanted(const struct velo_request *request)
{
	return request->config.effective.accounting;
}

static int accounting_attach(struct velo_request *request)
{
	struct cgroup_ctx ctx;
	bool had_error;
	int ret;

	had_error = cni_error_is_set();
	ret = cgroup_ctx_open(request, "accounting", &ctx);
	if (ret == -ENOENT && !ctx.path[0] && !had_error) {
		/* No pod cgroup: uncounted beats a pod that can't start. */
		cni_error_reset();
		pr_warn("accounting: no pod cgroup; pod %s starts uncounted",
			request->record.host_ifname);
		return VELO_FEATURE_FELL_BACK;
	}
	if (ret)
		return ret;
	ret = cgroup_link_attach(&ctx, KIND_IN, ctx.bpf.acct_in_fd, BPF_CGROUP_INET_INGRESS);
	if (!ret)
		ret = cgroup_link_attach(&ctx, KIND_EG, ctx.bpf.acct_eg_fd, BPF_CGROUP_INET_EGRESS);
	if (ret)
		cni_fail(ret, VELO_ERR_FEATURE, "accounting: attach to cgroup %s: %s", ctx.path,
			 strerror(-ret));
	else
		pr_info("accounting on cgroup %s (id %llu)", ctx.path,
			(unsigned long long)ctx.cgroup_id);
	cgroup_ctx_close(&ctx);
	return ret;
}

static int accounting_detach(struct velo_request *request)
{
	int lock_fd = cgroup_lock(request);

	if (lock_fd < 0)
		return lock_fd;
	cgroup_link_unpin(request, KIND_IN);
	cgroup_link_unpin(request, KIND_EG);
	cgroup_unlock(lock_fd);
	return 0;
}

static int accounting_check(struct velo_request *request)
{
	struct velo_bpf_cgroup bpf;
	int ret = 0;

	if (velo_bpf_cgroup_open_pinned(&request->config.paths, &bpf)) {
		cni_error_detail("accounting: velo's cgroup programs are not pinned");
		return -EIO;
	}
	if (cgroup_link_check(request, "accounting", KIND_IN, BPF_CGROUP_INET_INGRESS,
			      bpf.acct_in_fd, 0) ||
	    cgroup_link_check(request, "accounting", KIND_EG, BPF_CGROUP_INET_EGRESS,
			      bpf.acct_eg_fd, 0))
		ret = -EIO;
	velo_bpf_cgroup_close(&bpf);
	return ret;
}

/* ADD found no pod cgroup: no counting link of this endpoint may exist. */
static int accounting_check_routed(const struct velo_request *request)
{
	static const char *const kinds[] = { KIND_IN, KIND_EG };
	char path[4096];
	int ret = 0;

	for (unsigned i = 0; i < 2; i++)
		if (!velo_bpf_link_path(&request->config.paths, request->record.host_ifname,
					kinds[i], path, sizeof(path)) &&
		    !access(path, F_OK)) {
			cni_error_detail("accounting: uncounted pod has a link (%s)", path);
			ret = -EIO;
		}
	return ret;
}

const struct velo_feature velo_feature_accounting = {
	.name = "accounting",
	.bit = VELO_FEATURE_ACCOUNTING,
	.wanted = accounting_wanted,
	.attach = accounting_attach,
	.detach = accounting_detach,
	.check = accounting_check,
	.check_routed = accounting_check_routed,
};
