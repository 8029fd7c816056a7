// SPDX-License-Identifier: Apache-2.0
/* Loads NetworkPolicy's BPF objects once per node, and puts them on a selected pod's host veth. */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
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
#include "datapath/tc_hook.h"
#include "policy.skel.h"

/*
 * Where each program runs, in front of velo's other tc programs (the fast
 * path's redirect at ingress among them): tcx links pinned as
 * <bpffs>/links/<ifname>_<kind>, or clsact filters (tc_attach.h's table).
 */
static const struct velo_tc_hook tc_hooks[VELO_POL_N_HOOKS] = {
	[VELO_POL_HOOK_FROM] = { "pol_from", false, true, VELO_TC_POL_FROM_HANDLE,
				 VELO_TC_POL_PRIORITY },
	[VELO_POL_HOOK_TO] = { "pol_to", true, true, VELO_TC_POL_TO_HANDLE, VELO_TC_POL_PRIORITY },
	[VELO_POL_HOOK_DELIVER] = { "pol_deliver", true, true, VELO_TC_POL_DELIVER_HANDLE,
				    VELO_TC_POL_PRIORITY },
};
static const struct velo_tc_hook uplink_hook = { "pol_uplink", true, true,
						 VELO_TC_POL_UPLINK_HANDLE, VELO_TC_POL_PRIORITY };

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
	MAP_PIN(VELO_MAP_POL_IP, ip_fd),	   MAP_PIN(VELO_MAP_POL_SUBJECT, subject_fd),
	MAP_PIN(VELO_MAP_POL_RULES, rule_fd),	   MAP_PIN(VELO_MAP_POL_STATE, state_fd),
	MAP_PIN(VELO_MAP_POL_IF, if_fd),	   MAP_PIN(VELO_MAP_POL_CT, ct_fd),
	MAP_PIN(VELO_MAP_POL_DROPS, drop_fd),	   MAP_PIN(VELO_MAP_POL_TIER, tier_fd),
	PROG_PIN(VELO_PROG_POL_FROM_POD, from_fd), PROG_PIN(VELO_PROG_POL_TO_POD, to_fd),
	PROG_PIN(VELO_PROG_POL_UPLINK, uplink_fd),
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

bool velo_policy_bpf_current(const struct velo_paths *paths, const struct velo_policy_bpf *bpf)
{
	return velo_pins_current(paths, pins, N_PINS, bpf);
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

bool velo_policy_hook_attached(const struct velo_paths *paths, const struct velo_record *record,
			       enum velo_policy_hook hook)
{
	return velo_tc_hook_attached(paths, &tc_hooks[hook], record->host_ifname,
				     record->host_ifindex);
}

bool velo_policy_attached(const struct velo_paths *paths, const struct velo_record *record)
{
	return velo_policy_hook_attached(paths, record, VELO_POL_HOOK_FROM) &&
	       velo_policy_hook_attached(paths, record, VELO_POL_HOOK_TO);
}

/* Whether any of a pod's policy programs is on its veth: what DEL and velod's off sweep remove. */
bool velo_policy_any_attached(const struct velo_paths *paths, const struct velo_record *record)
{
	return velo_policy_hook_attached(paths, record, VELO_POL_HOOK_FROM) ||
	       velo_policy_hook_attached(paths, record, VELO_POL_HOOK_TO) ||
	       velo_policy_hook_attached(paths, record, VELO_POL_HOOK_DELIVER);
}

static int attach_hook(const struct velo_paths *paths, const struct velo_record *record,
		       enum velo_policy_hook hook, int prog_fd)
{
	return velo_tc_hook_attach(paths, &tc_hooks[hook], record->host_ifname,
				   record->host_ifindex, prog_fd);
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
	ret = attach_hook(paths, record, VELO_POL_HOOK_FROM, bpf->from_fd);
	if (!ret)
		ret = attach_hook(paths, record, VELO_POL_HOOK_TO, bpf->to_fd);
	if (ret)
		velo_policy_detach(paths, bpf, record);
	return ret;
}

void velo_policy_detach(const struct velo_paths *paths, const struct velo_policy_bpf *bpf,
			const struct velo_record *record)
{
	__u32 ifindex = (__u32)record->host_ifindex;

	for (unsigned hook = 0; hook < VELO_POL_N_HOOKS; hook++)
		velo_tc_hook_detach(paths, &tc_hooks[hook], record->host_ifname,
				    record->host_ifindex);
	/* Only once the links are gone: a program without its entry drops everything. */
	if (bpf && record->host_ifindex > 0 && bpf_map_delete_elem(bpf->if_fd, &ifindex) &&
	    errno != ENOENT)
		pr_warn("policy: remove %s's entry: %s", record->host_ifname, strerror(errno));
}

const char *velo_policy_hook_kind(enum velo_policy_hook hook)
{
	return tc_hooks[hook].kind;
}

const struct velo_tc_hook *velo_policy_tc_hook(enum velo_policy_hook hook)
{
	return &tc_hooks[hook];
}

int velo_policy_hook_prog(const struct velo_policy_bpf *bpf, enum velo_policy_hook hook)
{
	return hook == VELO_POL_HOOK_FROM ? bpf->from_fd
	       : hook == VELO_POL_HOOK_TO ? bpf->to_fd
					  : bpf->uplink_fd;
}

int velo_policy_uplink_attach(const struct velo_paths *paths, const struct velo_policy_bpf *bpf,
			      const char *ifname, int ifindex)
{
	int ret;

	if (!velo_tc_hook_attached(paths, &uplink_hook, ifname, ifindex))
		return velo_tc_hook_attach(paths, &uplink_hook, ifname, ifindex, bpf->uplink_fd);
	/* One an older generation attached moves to this one's program. */
	ret = velo_tc_hook_move(paths, &uplink_hook, ifname, ifindex, bpf->uplink_fd);
	return ret < 0 ? ret : 0;
}

void velo_policy_uplink_detach(const struct velo_paths *paths, const char *ifname)
{
	velo_tc_hook_detach(paths, &uplink_hook, ifname, (int)if_nametoindex(ifname));
}

bool velo_policy_deliver_attached(const struct velo_paths *paths, const struct velo_record *record)
{
	return velo_policy_hook_attached(paths, record, VELO_POL_HOOK_DELIVER);
}

int velo_policy_deliver_attach(const struct velo_paths *paths, const struct velo_policy_bpf *bpf,
			       const struct velo_record *record)
{
	return attach_hook(paths, record, VELO_POL_HOOK_DELIVER, bpf->uplink_fd);
}

void velo_policy_deliver_detach(const struct velo_paths *paths, const struct velo_record *record)
{
	velo_tc_hook_detach(paths, &tc_hooks[VELO_POL_HOOK_DELIVER], record->host_ifname,
			    record->host_ifindex);
}
