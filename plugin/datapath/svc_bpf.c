// SPDX-License-Identifier: Apache-2.0
/* Loads service translation's BPF objects once per node and pins them. */
#include <errno.h>
#include <stddef.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "bpf/lib/velo_svc.h"
#include "datapath/flow_maps.h"
#include "datapath/loader.h"
#include "datapath/pins.h"
#include "datapath/svc_bpf.h"
#include "cgroup_sock_addr.skel.h"

#define PROG_PIN(hook, name)                                                                      \
	{                                                                                         \
		name, false, offsetof(struct velo_svc_bpf, prog_fds) + (hook) * sizeof(int), true \
	}

/* The program pins last: their presence means the load finished. */
static const struct velo_pin pins[] = {
	{ VELO_MAP_SVC, true, offsetof(struct velo_svc_bpf, svc_fd), false },
	{ VELO_MAP_SVC_BE, true, offsetof(struct velo_svc_bpf, be_fd), false },
	{ VELO_MAP_SVC_AFF, true, offsetof(struct velo_svc_bpf, aff_fd), false },
	{ VELO_MAP_SVC_CNT, true, offsetof(struct velo_svc_bpf, cnt_fd), false },
	{ VELO_MAP_SVC_SK, true, offsetof(struct velo_svc_bpf, sk_fd), false },
	{ VELO_MAP_SVC_BC, true, offsetof(struct velo_svc_bpf, bc_fd), false },
	PROG_PIN(VELO_SVC_CONN4, VELO_PROG_SVC_CONN4),
	PROG_PIN(VELO_SVC_CONN6, VELO_PROG_SVC_CONN6),
	PROG_PIN(VELO_SVC_SEND4, VELO_PROG_SVC_SEND4),
	PROG_PIN(VELO_SVC_SEND6, VELO_PROG_SVC_SEND6),
	PROG_PIN(VELO_SVC_RECV4, VELO_PROG_SVC_RECV4),
	PROG_PIN(VELO_SVC_RECV6, VELO_PROG_SVC_RECV6),
	PROG_PIN(VELO_SVC_PEER4, VELO_PROG_SVC_PEER4),
	PROG_PIN(VELO_SVC_PEER6, VELO_PROG_SVC_PEER6),
};
#define N_PINS (sizeof(pins) / sizeof(pins[0]))

static const struct {
	enum bpf_attach_type type;
	const char *kind;
} hooks[VELO_SVC_N_HOOKS] = {
	[VELO_SVC_CONN4] = { BPF_CGROUP_INET4_CONNECT, "svc_conn4" },
	[VELO_SVC_CONN6] = { BPF_CGROUP_INET6_CONNECT, "svc_conn6" },
	[VELO_SVC_SEND4] = { BPF_CGROUP_UDP4_SENDMSG, "svc_send4" },
	[VELO_SVC_SEND6] = { BPF_CGROUP_UDP6_SENDMSG, "svc_send6" },
	[VELO_SVC_RECV4] = { BPF_CGROUP_UDP4_RECVMSG, "svc_recv4" },
	[VELO_SVC_RECV6] = { BPF_CGROUP_UDP6_RECVMSG, "svc_recv6" },
	[VELO_SVC_PEER4] = { BPF_CGROUP_INET4_GETPEERNAME, "svc_peer4" },
	[VELO_SVC_PEER6] = { BPF_CGROUP_INET6_GETPEERNAME, "svc_peer6" },
};

enum bpf_attach_type velo_svc_hook_type(enum velo_svc_hook hook)
{
	return hooks[hook].type;
}

const char *velo_svc_hook_kind(enum velo_svc_hook hook)
{
	return hooks[hook].kind;
}

void velo_svc_bpf_close(struct velo_svc_bpf *bpf)
{
	velo_pins_close(pins, N_PINS, bpf);
}

int velo_svc_bpf_open_pinned(const struct velo_paths *paths, struct velo_svc_bpf *bpf)
{
	return velo_pins_open(paths, pins, N_PINS, bpf);
}

/* Under the loader lock. */
static int load_and_pin(const struct velo_paths *paths, const void *arg)
{
	struct bpf_object_open_opts opts;
	struct cgroup_sock_addr *skel;
	int ret;

	(void)arg; /* nothing to choose */
	ret = velo_bpf_load_prepare(paths, &opts);
	if (ret)
		return ret;
	skel = cgroup_sock_addr__open_opts(&opts);
	if (!skel)
		return -errno;
	ret = velo_flow_maps_fit(skel->obj, paths);
	if (!ret)
		ret = cgroup_sock_addr__load(skel);
	if (!ret)
		ret = velo_pin_programs(paths, skel->obj, pins, N_PINS);
	if (!ret)
		pr_info("services: loaded and pinned the sock_addr programs under %s",
			paths->bpffs_dir);
	cgroup_sock_addr__destroy(skel);
	return ret;
}

int velo_svc_bpf_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
		      struct velo_svc_bpf *bpf)
{
	return velo_bpf_open_or_load(paths, lock_timeout_ms, pins, N_PINS, bpf, load_and_pin, NULL);
}
