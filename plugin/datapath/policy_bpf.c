// SPDX-License-Identifier: Apache-2.0
/* Loads NetworkPolicy's BPF objects once per node, and puts them on a selected pod's host veth. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "bpf/lib/velo_policy.h"
#include "datapath/flow_maps.h"
#include "datapath/loader.h"
#include "datapath/pins.h"
#include "datapath/policy_bpf.h"
#include "datapath/prog_info.h"
#include "datapath/tc_attach.h"
#include "policy.skel.h"

#define KIND_FROM "pol_from"
#define KIND_TO "pol_to"
#define KIND_UPLINK "pol_uplink"
#define KIND_DELIVER "pol_deliver"

static const char *const hook_kinds[VELO_POL_N_HOOKS] = {
	[VELO_POL_HOOK_FROM] = KIND_FROM,
	[VELO_POL_HOOK_TO] = KIND_TO,
	[VELO_POL_HOOK_DELIVER] = KIND_DELIVER,
};

#define MAP_PIN(name, field)                                               \
	{                                                                  \
		name, true, offsetof(struct velo_policy_bpf, field), false \
	}
#define PROG_PIN(name, field)                                              \
	{                                                                  \
		name, false, offsetof(struct velo_policy_bpf, field), true \
	}

/* The program pins last: their presence means the load finished. */
static const struct velo_pin pins[] = {
	MAP_PIN(VELO_MAP_POL_IP, ip_fd),       MAP_PIN(VELO_MAP_POL_SUBJECT, subject_fd),
	MAP_PIN(VELO_MAP_POL_RULES, rule_fd),  MAP_PIN(VELO_MAP_POL_STATE, state_fd),
	MAP_PIN(VELO_MAP_POL_IF, if_fd),       MAP_PIN(VELO_MAP_POL_CT, ct_fd),
	MAP_PIN(VELO_MAP_POL_DROPS, drop_fd),  PROG_PIN(VELO_PROG_POL_FROM_POD, from_fd),
	PROG_PIN(VELO_PROG_POL_TO_POD, to_fd), PROG_PIN(VELO_PROG_POL_UPLINK, uplink_fd),
};
#define N_PINS (sizeof(pins) / sizeof(pins[0]))

void velo_policy_bpf_close(struct velo_policy_bpf *bpf)
{
	velo_pins_close(pins, N_PINS, bpf);
}

/*
 * Under the loader lock. With conntrack's lookup when the kernel has it (which
 * end opened a flow policy has no entry for), else without: then a reply
 * velo didn't see open is judged as its TCP segment or its own flow.
 */
static int load_and_pin(const struct velo_paths *paths, const void *arg)
{
	bool have_ct = velo_bpf_have_skb_ct_kfuncs();
	struct bpf_object_open_opts opts;
	struct policy *skel;
	int ret;

	(void)arg; /* nothing to choose */
	ret = velo_bpf_load_prepare(paths, &opts);
	if (ret)
		return ret;
	do {
		skel = policy__open_opts(&opts);
		if (!skel)
			return -errno;
		skel->rodata->velo_have_ct_kfuncs = have_ct;
		ret = velo_flow_maps_fit(skel->obj, paths);
		if (!ret)
			ret = policy__load(skel);
		if (ret && have_ct) {
			pr_warn("policy: the programs with the conntrack lookup failed to load (%s): "
				"loading them without",
				strerror(-ret));
			policy__destroy(skel);
			skel = NULL;
		}
		have_ct = false;
	} while (!skel);
	if (!ret)
		ret = velo_pin_programs(paths, skel->obj, pins, N_PINS);
	if (!ret)
		pr_info("policy: loaded and pinned the NetworkPolicy programs under %s",
			paths->bpffs_dir);
	policy__destroy(skel);
	return ret;
}

int velo_policy_bpf_open_pinned(const struct velo_paths *paths, struct velo_policy_bpf *bpf)
{
	return velo_pins_open(paths, pins, N_PINS, bpf);
}

int velo_policy_bpf_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
			 struct velo_policy_bpf *bpf)
{
	return velo_bpf_open_or_load(paths, lock_timeout_ms, pins, N_PINS, bpf, load_and_pin, NULL);
}

/* The record's addresses as the programs compare them (IPv4 mapped into IPv6). */
static void pod_addrs(const struct velo_record *record, struct velo_pol_if *pod)
{
	memset(pod, 0, sizeof(*pod));
	for (unsigned i = 0; i < record->n_ips; i++) {
		const struct velo_ip *addr = &record->ips[i];

		if (addr->family == AF_INET) {
			pod->addr4[10] = pod->addr4[11] = 0xff;
			memcpy(&pod->addr4[12], addr->addr, 4);
		} else if (addr->family == AF_INET6) {
			memcpy(pod->addr6, addr->addr, 16);
		}
	}
}

static bool link_pinned(const struct velo_paths *paths, const char *host_ifname, const char *kind)
{
	char path[PATH_MAX];
	struct stat st;

	return !velo_bpf_link_path(paths, host_ifname, kind, path, sizeof(path)) &&
	       !stat(path, &st);
}

bool velo_policy_link_pinned(const struct velo_paths *paths, const struct velo_record *record,
			     bool from_pod)
{
	return link_pinned(paths, record->host_ifname, from_pod ? KIND_FROM : KIND_TO);
}

bool velo_policy_attached(const struct velo_paths *paths, const struct velo_record *record)
{
	return velo_policy_link_pinned(paths, record, true) &&
	       velo_policy_link_pinned(paths, record, false);
}

/* One direction's link, first in its chain, pinned. */
static int attach_one(const struct velo_paths *paths, const struct velo_record *record,
		      const char *kind, int prog_fd, bool egress)
{
	int link_fd, ret;

	if (link_pinned(paths, record->host_ifname, kind))
		return 0;
	link_fd = egress ? velo_tcx_egress_link(prog_fd, record->host_ifindex, true)
			 : velo_tcx_ingress_link(prog_fd, record->host_ifindex, true);
	if (link_fd < 0)
		return link_fd;
	ret = velo_endpoint_link_pin(paths, record->host_ifname, kind, link_fd);
	close(link_fd);
	return ret;
}

int velo_policy_attach(const struct velo_paths *paths, const struct velo_policy_bpf *bpf,
		       const struct velo_record *record)
{
	__u32 ifindex = (__u32)record->host_ifindex;
	struct velo_pol_if pod;
	int ret;

	if (record->host_ifindex <= 0)
		return -ENODEV;
	/* The pod's addresses first: without them both programs drop everything. */
	pod_addrs(record, &pod);
	if (bpf_map_update_elem(bpf->if_fd, &ifindex, &pod, BPF_ANY))
		return -errno;
	ret = attach_one(paths, record, KIND_FROM, bpf->from_fd, false);
	if (!ret)
		ret = attach_one(paths, record, KIND_TO, bpf->to_fd, true);
	if (ret)
		velo_policy_detach(paths, bpf, record);
	return ret;
}

void velo_policy_detach(const struct velo_paths *paths, const struct velo_policy_bpf *bpf,
			const struct velo_record *record)
{
	__u32 ifindex = (__u32)record->host_ifindex;

	velo_endpoint_link_unpin(paths, record->host_ifname, KIND_FROM);
	velo_endpoint_link_unpin(paths, record->host_ifname, KIND_TO);
	velo_endpoint_link_unpin(paths, record->host_ifname, KIND_DELIVER);
	/* Only once the links are gone: a program without its entry drops everything. */
	if (bpf && record->host_ifindex > 0 && bpf_map_delete_elem(bpf->if_fd, &ifindex) &&
	    errno != ENOENT)
		pr_warn("policy: remove %s's entry: %s", record->host_ifname, strerror(errno));
}

const char *velo_policy_hook_kind(enum velo_policy_hook hook)
{
	return hook_kinds[hook];
}

int velo_policy_hook_prog(const struct velo_policy_bpf *bpf, enum velo_policy_hook hook)
{
	return hook == VELO_POL_HOOK_FROM ? bpf->from_fd
	       : hook == VELO_POL_HOOK_TO ? bpf->to_fd
					  : bpf->uplink_fd;
}

/* The pinned link runs prog_fd (bpf_link_update when an older generation's program). */
static int link_current(const char *path, int prog_fd)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(path), ret = 0;

	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		ret = -errno;
	else if (info.prog_id != velo_prog_id(prog_fd) && bpf_link_update(fd, prog_fd, NULL))
		ret = -errno;
	close(fd);
	return ret;
}

int velo_policy_uplink_attach(const struct velo_paths *paths, const struct velo_policy_bpf *bpf,
			      const char *ifname, int ifindex)
{
	char path[PATH_MAX];
	int link_fd, ret;

	if (link_pinned(paths, ifname, KIND_UPLINK)) {
		ret = velo_bpf_link_path(paths, ifname, KIND_UPLINK, path, sizeof(path));
		return ret ? ret : link_current(path, bpf->uplink_fd);
	}
	link_fd = velo_tcx_egress_link(bpf->uplink_fd, ifindex, true);
	if (link_fd < 0)
		return link_fd;
	ret = velo_endpoint_link_pin(paths, ifname, KIND_UPLINK, link_fd);
	close(link_fd);
	return ret;
}

void velo_policy_uplink_detach(const struct velo_paths *paths, const char *ifname)
{
	velo_endpoint_link_unpin(paths, ifname, KIND_UPLINK);
}

bool velo_policy_deliver_attached(const struct velo_paths *paths, const struct velo_record *record)
{
	return link_pinned(paths, record->host_ifname, KIND_DELIVER);
}

int velo_policy_deliver_attach(const struct velo_paths *paths, const struct velo_policy_bpf *bpf,
			       const struct velo_record *record)
{
	if (record->host_ifindex <= 0)
		return -ENODEV;
	return attach_one(paths, record, KIND_DELIVER, bpf->uplink_fd, true);
}

void velo_policy_deliver_detach(const struct velo_paths *paths, const struct velo_record *record)
{
	velo_endpoint_link_unpin(paths, record->host_ifname, KIND_DELIVER);
}
