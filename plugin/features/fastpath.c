// SPDX-License-Identifier: Apache-2.0
/*
 * The L3 shortcut between local pods (annotation velo.dev/fastpath: tc or
 * xdp). attach writes the pod's addresses into the endpoint map (owned by a
 * hash of the container id) and attaches velo_tc_ingress (tcx, else clsact)
 * or velo_xdp_host to the host-side veth, pinning the link per endpoint.
 * Whatever the kernel lacks, or a shaped pod (config.shaped: runtimeConfig
 * bandwidth has a rate), stays on the routed path with one log line: never a
 * failed pod (only a busy loader lock is code 11, as for every feature). A
 * shaped pod has no endpoint entry either, so no other pod's shortcut
 * redirects past its host veth's qdiscs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/error.h"
#include "base/log.h"
#include "base/naming.h"
#include "bpf/lib/velo_shared.h"
#include "datapath/endpoint_map.h"
#include "datapath/loader.h"
#include "datapath/probe.h"
#include "datapath/prog_info.h"
#include "datapath/tc_attach.h"
#include "features/fastpath.h"
#include "features/feature.h"
#include "net/netns.h"

/* Debian 12's uapi headers predate tcx (Linux 6.6): the kernel's value. */
#define VELO_BPF_LINK_TYPE_TCX 11

struct fastpath_ctx {
	struct velo_request *request;
	struct velo_bpf bpf;
	struct velo_bpf_features features;
	bool xdp;
	uint64_t owner;
};

static bool fastpath_wanted(const struct velo_request *request)
{
	return request->config.effective.fastpath != VELO_FASTPATH_OFF;
}

static int link_pin(struct fastpath_ctx *ctx, int link_fd, const char *kind)
{
	return velo_endpoint_link_pin(&ctx->request->config.paths, ctx->request->record.host_ifname,
				      kind, link_fd);
}

static int attach_tc(struct fastpath_ctx *ctx)
{
	const struct velo_record *record = &ctx->request->record;
	int link_fd, ret;

	if (!velo_tc_use_tcx(&ctx->features))
		return velo_clsact_ingress_attach(ctx->bpf.tc_prog_fd, record->host_ifindex,
						  VELO_TC_FASTPATH_HANDLE,
						  VELO_TC_FASTPATH_PRIORITY);
	link_fd = velo_tcx_ingress_link(ctx->bpf.tc_prog_fd, record->host_ifindex, false);
	if (link_fd < 0)
		return link_fd;
	ret = link_pin(ctx, link_fd, "tc");
	close(link_fd); /* on failure this detaches it again */
	return ret;
}

/* Pod side, in its netns: NAPI for redirected frames (GRO on), full checksums (tx csum off). */
static int ethtool_set(int sock, const char *ifname, __u32 cmd, __u32 value)
{
	struct ethtool_value ev = { .cmd = cmd, .data = value };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&ev;
	return ioctl(sock, SIOCETHTOOL, &ifr) ? -errno : 0;
}

static int xdp_prepare_pod(const struct velo_record *record)
{
	struct netns_guard guard;
	int sock, ret;

	ret = netns_enter(record->netns, &guard);
	if (ret)
		return ret;
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		ret = -errno;
		goto out;
	}
	/* XDP_REDIRECT into a veth drops frames unless its peer runs NAPI (GRO on does that). */
	ret = ethtool_set(sock, record->ifname, ETHTOOL_SGRO, 1);
	/* Frames sent CHECKSUM_PARTIAL arrive through XDP with bad checksums: send them full. */
	if (!ret)
		ret = ethtool_set(sock, record->ifname, ETHTOOL_STXCSUM, 0);
	close(sock);
out:
	netns_leave(&guard);
	return ret;
}

static int attach_xdp(struct fastpath_ctx *ctx)
{
	const struct velo_record *record = &ctx->request->record;
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = XDP_FLAGS_DRV_MODE);
	int link_fd, ret;

	link_fd = bpf_link_create(ctx->bpf.xdp_prog_fd, record->host_ifindex, BPF_XDP, &opts);
	if (link_fd < 0)
		return -errno;
	ret = link_pin(ctx, link_fd, "xdp");
	close(link_fd);
	return ret;
}

static int devmap_add(struct fastpath_ctx *ctx)
{
	const struct velo_record *record = &ctx->request->record;
	struct bpf_devmap_val val = { .ifindex = (__u32)record->host_ifindex };
	__u32 key = (__u32)record->host_ifindex;

	val.bpf_prog.fd = ctx->bpf.devmap_prog_fd;
	return bpf_map_update_elem(ctx->bpf.xdp_tx_fd, &key, &val, BPF_ANY) ? -errno : 0;
}

static void devmap_remove(const struct velo_bpf *bpf, const struct velo_record *record)
{
	__u32 key = (__u32)record->host_ifindex;

	/* The kernel drops entries of deleted devices; a reused ifindex is someone else's. */
	if (!velo_host_veth_is_ours(record))
		return;
	bpf_map_delete_elem(bpf->xdp_tx_fd, &key);
	bpf_map_delete_elem(bpf->dst_stats_fd, &key);
}

/* Falls back to routed with one line: the pod is created, its record says routed. */
static int fall_back(const struct velo_request *request, const char *why, int err)
{
	pr_warn("fastpath %s: %s%s%s; pod %s stays on the routed path",
		velo_fastpath_str(request->config.effective.fastpath), why, err ? ": " : "",
		err ? strerror(-err) : "", request->record.host_ifname);
	return VELO_FEATURE_FELL_BACK;
}

static int fastpath_attach(struct velo_request *request)
{
	const struct velo_record *record = &request->record;
	struct fastpath_ctx ctx = {
		.request = request,
		.xdp = request->config.effective.fastpath == VELO_FASTPATH_XDP,
		.owner = velo_endpoint_owner(record),
	};
	const char *missing;
	int ret;

	/* Shaping happens on the routed path (ifb, tbf): a shortcut would bypass it. */
	if (request->config.shaped)
		return fall_back(request, "bandwidth limits need the routed path", 0);
	velo_bpf_probe(&request->config.paths, &ctx.features);
	missing = velo_bpf_missing(&ctx.features, ctx.xdp);
	if (missing) {
		pr_warn("fastpath %s: this kernel lacks %s; pod %s stays on the routed path",
			velo_fastpath_str(request->config.effective.fastpath), missing,
			record->host_ifname);
		return VELO_FEATURE_FELL_BACK;
	}
	ret = velo_bpf_open(&request->config.paths, request->config.lock_timeout_ms, &ctx.bpf);
	if (ret == -EAGAIN)
		return ret; /* the loader lock is busy: try again later, like every feature */
	if (ret)
		return fall_back(request, "BPF objects can't be loaded", ret);

	/* Receivers first, then the addresses others redirect to, then our own sender hook. */
	if (ctx.xdp) {
		ret = xdp_prepare_pod(record);
		if (ret)
			goto err_fall_back;
		ret = devmap_add(&ctx);
		if (ret)
			goto err_fall_back;
	}
	ret = velo_endpoints_write(ctx.bpf.endpoints_fd, record, ctx.xdp);
	if (ret)
		goto err_devmap;
	ret = ctx.xdp ? attach_xdp(&ctx) : attach_tc(&ctx);
	if (ret)
		goto err_endpoints;
	pr_info("fastpath %s on %s (%s)", velo_fastpath_str(request->config.effective.fastpath),
		record->host_ifname,
		ctx.xdp				 ? "xdp native + devmap"
		: velo_tc_use_tcx(&ctx.features) ? "tcx"
						 : "clsact");
	velo_bpf_close(&ctx.bpf);
	return 0;

err_endpoints:
	velo_endpoints_remove(ctx.bpf.endpoints_fd, record, ctx.owner);
err_devmap:
	if (ctx.xdp)
		devmap_remove(&ctx.bpf, record);
err_fall_back:
	velo_bpf_close(&ctx.bpf);
	return fall_back(request, "attach failed", ret);
}

static int fastpath_detach(struct velo_request *request)
{
	const struct velo_record *record = &request->record;
	struct velo_bpf_features features;
	struct velo_bpf bpf;

	/* Whatever mode ADD used: DEL may not see the annotations again. */
	velo_endpoint_link_unpin(&request->config.paths, record->host_ifname, "tc");
	velo_endpoint_link_unpin(&request->config.paths, record->host_ifname, "xdp");
	velo_bpf_probe(&request->config.paths, &features);
	if (!velo_tc_use_tcx(&features) && velo_host_veth_is_ours(record)) {
		velo_clsact_ingress_detach(record->host_ifindex, VELO_TC_FASTPATH_HANDLE,
					   VELO_TC_FASTPATH_PRIORITY);
		velo_clsact_ingress_detach(record->host_ifindex, VELO_TC_FASTPATH_HANDLE,
					   VELO_TC_FASTPATH_PRIORITY_OLD);
	}
	if (velo_bpf_open_pinned(&request->config.paths, &bpf))
		return 0; /* nothing loaded, nothing of ours in maps */
	velo_endpoints_remove(bpf.endpoints_fd, record, velo_endpoint_owner(record));
	devmap_remove(&bpf, record);
	velo_bpf_close(&bpf);
	return 0;
}

/* The pinned link exists, is on our veth, and runs our program. */
static int check_link(const struct velo_request *request, const char *kind, __u32 link_type,
		      int prog_fd)
{
	const struct velo_record *record = &request->record;
	struct bpf_link_info link_info;
	char path[PATH_MAX];
	unsigned prog_id;

	if (velo_bpf_link_path(&request->config.paths, record->host_ifname, kind, path,
			       sizeof(path)))
		return -ENAMETOOLONG;
	if (velo_bpf_read_link("fastpath", path, prog_fd, &link_info, &prog_id))
		return -EIO;
	if (link_info.type != link_type || link_info.xdp.ifindex != (__u32)record->host_ifindex) {
		/* tcx and xdp link info both start with the ifindex. */
		cni_error_detail("fastpath: link %s is on ifindex %u, not %s (%d)", path,
				 link_info.xdp.ifindex, record->host_ifname, record->host_ifindex);
		return -EIO;
	}
	if (link_info.prog_id != prog_id) {
		cni_error_detail("fastpath: link %s runs program %u, not velo's %u", path,
				 link_info.prog_id, prog_id);
		return -EIO;
	}
	return 0;
}

/* Our clsact filter's program id (kernels without tcx), 0 when there is none. */
static unsigned clsact_prog_id(const struct velo_record *record)
{
	return velo_clsact_prog_id(record->host_ifindex, VELO_TC_FASTPATH_HANDLE,
				   VELO_TC_FASTPATH_PRIORITY);
}

static int check_clsact(const struct velo_record *record, int prog_fd)
{
	unsigned id = clsact_prog_id(record);

	if (!id || id != velo_prog_id(prog_fd)) {
		cni_error_detail("fastpath: velo's clsact filter missing on %s",
				 record->host_ifname);
		return -EIO;
	}
	return 0;
}

static int check_endpoints(const struct velo_bpf *bpf, const struct velo_record *record, bool xdp)
{
	__u32 flags = VELO_EP_F_FASTPATH | (xdp ? VELO_EP_F_XDP_RX : 0);
	uint64_t owner = velo_endpoint_owner(record);
	int ret = 0;

	for (unsigned i = 0; i < record->n_ips; i++) {
		char addr[INET6_ADDRSTRLEN];
		struct velo_endpoint ep;
		struct velo_ep_key key;

		velo_ep_key(&record->ips[i], &key);
		inet_ntop(record->ips[i].family, record->ips[i].addr, addr, sizeof(addr));
		if (bpf_map_lookup_elem(bpf->endpoints_fd, &key, &ep)) {
			cni_error_detail("fastpath: endpoint map has no entry for %s", addr);
			ret = -EIO;
		} else if (ep.owner != owner || ep.ifindex != (__u32)record->host_ifindex ||
			   ep.flags != flags) {
			cni_error_detail("fastpath: endpoint entry for %s belongs to another "
					 "attachment or is stale (ifindex %u, flags %#x)",
					 addr, ep.ifindex, ep.flags);
			ret = -EIO;
		}
	}
	if (xdp) {
		struct bpf_devmap_val val;
		__u32 key = (__u32)record->host_ifindex;

		if (bpf_map_lookup_elem(bpf->xdp_tx_fd, &key, &val) || val.ifindex != key) {
			cni_error_detail("fastpath: devmap has no entry for %s",
					 record->host_ifname);
			ret = -EIO;
		}
	}
	return ret;
}

/* ADD left the pod routed (shaped, or a fall back): a shortcut found now is drift. */
static int fastpath_check_routed(const struct velo_request *request)
{
	const struct velo_record *record = &request->record;
	struct velo_bpf bpf;
	int ret = 0;

	for (unsigned i = 0; i < 2; i++) {
		const char *kind = i ? "xdp" : "tc";
		char path[PATH_MAX];

		if (!velo_bpf_link_path(&request->config.paths, record->host_ifname, kind, path,
					sizeof(path)) &&
		    !access(path, F_OK)) {
			cni_error_detail("fastpath: routed pod has a %s shortcut (%s)", kind, path);
			ret = -EIO;
		}
	}
	if (velo_bpf_open_pinned(&request->config.paths, &bpf))
		return ret;
	for (unsigned i = 0; i < record->n_ips; i++) {
		struct velo_endpoint ep;
		struct velo_ep_key key;

		velo_ep_key(&record->ips[i], &key);
		if (!bpf_map_lookup_elem(bpf.endpoints_fd, &key, &ep) &&
		    ep.owner == velo_endpoint_owner(record)) {
			cni_error_detail("fastpath: routed pod is in the endpoint map (address %u)",
					 i);
			ret = -EIO;
		}
	}
	velo_bpf_close(&bpf);
	return ret;
}

static int fastpath_check(struct velo_request *request)
{
	const struct velo_record *record = &request->record;
	bool xdp = request->config.effective.fastpath == VELO_FASTPATH_XDP;
	struct velo_bpf_features features;
	struct velo_bpf bpf;
	int ret;

	/* ADD left a shaped pod routed: a shortcut found now bypasses its limits. */
	if (request->config.shaped)
		return fastpath_check_routed(request);
	velo_bpf_probe(&request->config.paths, &features);
	if (velo_bpf_missing(&features, xdp))
		return 0;
	if (velo_bpf_open_pinned(&request->config.paths, &bpf)) {
		cni_error_detail("fastpath: velo's pinned maps or programs are missing under %s",
				 request->config.paths.bpffs_dir);
		return -EIO;
	}
	ret = check_endpoints(&bpf, record, xdp);
	if (xdp) {
		if (check_link(request, "xdp", BPF_LINK_TYPE_XDP, bpf.xdp_prog_fd))
			ret = -EIO;
	} else if (velo_tc_use_tcx(&features)) {
		if (check_link(request, "tc", VELO_BPF_LINK_TYPE_TCX, bpf.tc_prog_fd))
			ret = -EIO;
	} else if (check_clsact(record, bpf.tc_prog_fd)) {
		ret = -EIO;
	}
	velo_bpf_close(&bpf);
	return ret;
}

const struct velo_feature velo_feature_fastpath = {
	.name = "fastpath",
	.bit = VELO_FEATURE_FASTPATH,
	.wanted = fastpath_wanted,
	.attach = fastpath_attach,
	.detach = fastpath_detach,
	.check = fastpath_check,
	.check_routed = fastpath_check_routed,
};
