// SPDX-License-Identifier: Apache-2.0
/* Loads the connection-event program once per node and pins it (flow_bpf.h). */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "bpf/lib/velo_flow.h"
#include "datapath/endpoint_map.h"
#include "datapath/flow_bpf.h"
#include "datapath/flow_maps.h"
#include "datapath/loader.h"
#include "datapath/pins.h"
#include "flows.skel.h"

/* The program pins last: their presence means the load finished. */
static const struct velo_pin pins[] = {
	{ VELO_MAP_FLOW_UDP, true, offsetof(struct velo_flow_bpf, udp_fd), false },
	{ VELO_MAP_FLOW_PODS, true, offsetof(struct velo_flow_bpf, pods_fd), false },
	{ VELO_PROG_FLOW_SOCKOPS, false, offsetof(struct velo_flow_bpf, ops_fd), true },
	{ VELO_PROG_FLOW_UDP_EG, false, offsetof(struct velo_flow_bpf, udp_eg_fd), true },
	{ VELO_PROG_FLOW_UDP_IN, false, offsetof(struct velo_flow_bpf, udp_in_fd), true },
};
#define N_PINS (sizeof(pins) / sizeof(pins[0]))

static const struct {
	const char *kind;
	enum bpf_attach_type type;
	size_t fd_offset; /* in struct velo_flow_bpf */
} hooks[VELO_FLOW_N_HOOKS] = {
	[VELO_FLOW_OPS] = { "flow_ops", BPF_CGROUP_SOCK_OPS,
			    offsetof(struct velo_flow_bpf, ops_fd) },
	[VELO_FLOW_UDP_EG] = { "flow_udp_eg", BPF_CGROUP_INET_EGRESS,
			       offsetof(struct velo_flow_bpf, udp_eg_fd) },
	[VELO_FLOW_UDP_IN] = { "flow_udp_in", BPF_CGROUP_INET_INGRESS,
			       offsetof(struct velo_flow_bpf, udp_in_fd) },
};

enum bpf_attach_type velo_flow_hook_type(enum velo_flow_hook hook)
{
	return hooks[hook].type;
}

const char *velo_flow_hook_kind(enum velo_flow_hook hook)
{
	return hooks[hook].kind;
}

int velo_flow_hook_prog(const struct velo_flow_bpf *bpf, enum velo_flow_hook hook)
{
	return *(const int *)((const char *)bpf + hooks[hook].fd_offset);
}

void velo_flow_bpf_close(struct velo_flow_bpf *bpf)
{
	velo_pins_close(pins, N_PINS, bpf);
}

int velo_flow_bpf_open_pinned(const struct velo_paths *paths, struct velo_flow_bpf *bpf)
{
	return velo_pins_open(paths, pins, N_PINS, bpf);
}

/* Under the loader lock. */
static int load_and_pin(const struct velo_paths *paths, const void *arg)
{
	struct bpf_object_open_opts opts;
	struct flows *skel;
	int ret;

	(void)arg; /* nothing to choose */
	ret = velo_bpf_load_prepare(paths, &opts);
	if (ret)
		return ret;
	skel = flows__open_opts(&opts);
	if (!skel)
		return -errno;
	ret = velo_flow_maps_fit(skel->obj, paths);
	if (!ret)
		ret = flows__load(skel);
	if (!ret)
		ret = velo_pin_programs(paths, skel->obj, pins, N_PINS);
	if (!ret)
		pr_info("flows: loaded and pinned the connection-event programs under %s",
			paths->bpffs_dir);
	flows__destroy(skel);
	return ret;
}

int velo_flow_bpf_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
		       struct velo_flow_bpf *bpf)
{
	return velo_bpf_open_or_load(paths, lock_timeout_ms, pins, N_PINS, bpf, load_and_pin, NULL);
}

/* Removes the entries of record's addresses that owner wrote. */
static void remove_owned(int map_fd, const struct velo_record *record, uint64_t owner)
{
	for (unsigned i = 0; i < record->n_ips; i++) {
		struct velo_ep_key key;
		uint64_t stamp;

		velo_ep_key(&record->ips[i], &key);
		if (bpf_map_lookup_elem(map_fd, &key, &stamp) || stamp != owner)
			continue;
		if (bpf_map_delete_elem(map_fd, &key) && errno != ENOENT)
			pr_warn("flows: remove a reporting pod's address: %s", strerror(errno));
	}
}

int velo_flow_pods_add(const struct velo_flow_bpf *bpf, const struct velo_record *record)
{
	uint64_t owner = velo_endpoint_owner(record);

	for (unsigned i = 0; i < record->n_ips; i++) {
		struct velo_ep_key key;

		velo_ep_key(&record->ips[i], &key);
		/* An older sandbox's stale entry for this address is replaced: it is ours now. */
		if (bpf_map_update_elem(bpf->pods_fd, &key, &owner, BPF_ANY)) {
			int ret = -errno;

			remove_owned(bpf->pods_fd, record, owner);
			return ret;
		}
	}
	return 0;
}

void velo_flow_pods_remove(const struct velo_paths *paths, const struct velo_record *record)
{
	int fd = velo_map_pin_open(paths, VELO_MAP_FLOW_PODS);

	if (fd < 0)
		return; /* never loaded on this node: nothing to remove */
	remove_owned(fd, record, velo_endpoint_owner(record));
	close(fd);
}

bool velo_flow_pods_have(const struct velo_flow_bpf *bpf, const struct velo_record *record)
{
	uint64_t owner = velo_endpoint_owner(record);

	for (unsigned i = 0; i < record->n_ips; i++) {
		struct velo_ep_key key;
		uint64_t stamp;

		velo_ep_key(&record->ips[i], &key);
		if (bpf_map_lookup_elem(bpf->pods_fd, &key, &stamp) || stamp != owner)
			return false;
	}
	return true;
}
