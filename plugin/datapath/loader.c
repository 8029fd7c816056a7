// SPDX-License-Identifier: Apache-2.0
/* Loads velo's BPF objects once per node, pins them, and opens the pins for everyone else. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "base/error.h"
#include "base/lock.h"
#include "base/log.h"
#include "bpf/lib/velo_shared.h"
#include "datapath/flow_maps.h"
#include "datapath/loader.h"
#include "cgroup_skb.skel.h"
#include "cgroup_sock.skel.h"
#include "veth_tc.skel.h"
#include "veth_xdp.skel.h"

static const struct velo_pin veth_pins[] = {
	{ VELO_MAP_ENDPOINTS, true, offsetof(struct velo_bpf, endpoints_fd), false },
	{ VELO_MAP_STATS, true, offsetof(struct velo_bpf, stats_fd), false },
	{ VELO_MAP_XDP_TX, true, offsetof(struct velo_bpf, xdp_tx_fd), false },
	{ VELO_MAP_DST_STATS, true, offsetof(struct velo_bpf, dst_stats_fd), false },
	{ VELO_PROG_TC_INGRESS, false, offsetof(struct velo_bpf, tc_prog_fd), true },
	{ VELO_PROG_XDP_HOST, false, offsetof(struct velo_bpf, xdp_prog_fd), true },
	{ VELO_PROG_XDP_DST, false, offsetof(struct velo_bpf, devmap_prog_fd), true },
};

static const struct velo_pin cgroup_pins[] = {
	{ VELO_MAP_CG_COUNTERS, true, offsetof(struct velo_bpf_cgroup, counters_fd), false },
	{ VELO_MAP_CG_CONFIG, true, offsetof(struct velo_bpf_cgroup, config_fd), false },
	{ VELO_MAP_DENY, true, offsetof(struct velo_bpf_cgroup, deny_fd), false },
	{ VELO_MAP_DENY_IF, true, offsetof(struct velo_bpf_cgroup, deny_if_fd), false },
	{ VELO_PROG_CG_ACCT_IN, false, offsetof(struct velo_bpf_cgroup, acct_in_fd), true },
	{ VELO_PROG_CG_ACCT_EG, false, offsetof(struct velo_bpf_cgroup, acct_eg_fd), true },
	{ VELO_PROG_CG_DENY_EG, false, offsetof(struct velo_bpf_cgroup, deny_eg_fd), true },
	{ VELO_PROG_CG_SOCKOPT, false, offsetof(struct velo_bpf_cgroup, sockopt_fd), true },
	{ VELO_PROG_TC_DENY, false, offsetof(struct velo_bpf_cgroup, tc_deny_fd), true },
};

#define N_VETH_PINS (sizeof(veth_pins) / sizeof(veth_pins[0]))
#define N_CGROUP_PINS (sizeof(cgroup_pins) / sizeof(cgroup_pins[0]))

/* A group of objects loaded together: its pins and the struct of fds they open into. */
struct pin_group {
	const struct velo_pin *pins;
	size_t n_pins;
	int (*load)(const struct velo_paths *paths, const void *arg);
};

/* velo_<base>_v<digits>: the length of "velo_<base>_v", else 0. */
static size_t versioned_base_len(const char *name)
{
	const char *v = strrchr(name, 'v');

	if (strncmp(name, "velo_", 5) || !v || v == name || v[-1] != '_' || !v[1] ||
	    strspn(v + 1, "0123456789") != strlen(v + 1))
		return 0;
	return (size_t)(v + 1 - name);
}

static bool superseded_by(const char *name, const struct velo_pin *pins, size_t n_pins)
{
	size_t base = versioned_base_len(name);

	for (size_t i = 0; base && i < n_pins; i++)
		if (pins[i].map && versioned_base_len(pins[i].name) == base &&
		    !strncmp(pins[i].name, name, base) && strcmp(pins[i].name, name))
			return true;
	return false;
}

bool velo_map_pin_superseded(const char *name)
{
	return superseded_by(name, veth_pins, N_VETH_PINS) ||
	       superseded_by(name, cgroup_pins, N_CGROUP_PINS);
}

static __attribute__((format(printf, 2, 0))) int libbpf_print(enum libbpf_print_level level,
							      const char *fmt, va_list args)
{
	char line[1024];
	size_t len;

	vsnprintf(line, sizeof(line), fmt, args);
	len = strlen(line);
	while (len && line[len - 1] == '\n')
		line[--len] = '\0';
	log_msg(level == LIBBPF_WARN ? VELO_LOG_WARN : VELO_LOG_DEBUG, "%s", line);
	return 0;
}

void velo_bpf_set_print(void)
{
	libbpf_set_print(libbpf_print);
}

static void group_close(const struct pin_group *group, void *fds)
{
	velo_pins_close(group->pins, group->n_pins, fds);
}

static int group_open_pinned(const struct velo_paths *paths, const struct pin_group *group,
			     void *fds)
{
	return velo_pins_open(paths, group->pins, group->n_pins, fds);
}

/*
 * Maps already pinned are reused by fd after a layout check of our own:
 * libbpf 1.1's check fails for devmaps, whose flags the kernel extends with
 * BPF_F_RDONLY_PROG. A different layout under the same name is -EEXIST.
 * The flow ring first takes the size it was pinned with (flow_maps.h).
 */
static int reuse_pinned_maps(const struct velo_paths *paths, struct bpf_object *obj)
{
	struct bpf_map *map;
	int fit;

	fit = velo_flow_maps_fit(obj, paths);
	if (fit)
		return fit;
	bpf_object__for_each_map (map, obj) {
		struct bpf_map_info info;
		__u32 len = sizeof(info);
		char path[PATH_MAX];
		int fd, ret = 0;

		if (!bpf_map__pin_path(map))
			continue; /* .rodata and friends */
		if (snprintf(path, sizeof(path), "%s/%s", paths->bpffs_dir, bpf_map__name(map)) >=
		    (int)sizeof(path))
			return -ENAMETOOLONG;
		fd = bpf_obj_get(path);
		if (fd < 0) {
			if (errno == ENOENT)
				continue; /* libbpf creates and pins it */
			return -errno;
		}
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			ret = -errno;
		else if (info.type != bpf_map__type(map) ||
			 info.key_size != bpf_map__key_size(map) ||
			 info.value_size != bpf_map__value_size(map) ||
			 info.max_entries != bpf_map__max_entries(map))
			ret = -EEXIST;
		if (!ret)
			ret = bpf_map__reuse_fd(map, fd);
		if (!ret)
			ret = bpf_map__set_pin_path(map, NULL); /* pinned already */
		close(fd);
		if (ret == -EEXIST)
			pr_warn("pinned map %s has another layout than this velo's", path);
		if (ret)
			return ret;
	}
	return 0;
}

int velo_bpf_share_maps(const struct velo_bpf *bpf, struct bpf_object *obj)
{
	const struct {
		const char *name;
		int fd;
	} shared[] = {
		{ VELO_MAP_ENDPOINTS, bpf->endpoints_fd },
		{ VELO_MAP_STATS, bpf->stats_fd },
		{ VELO_MAP_XDP_TX, bpf->xdp_tx_fd },
		{ VELO_MAP_DST_STATS, bpf->dst_stats_fd },
	};
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(shared) / sizeof(shared[0]); i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(obj, shared[i].name);

		if (!map)
			continue;
		ret = bpf_map__reuse_fd(map, shared[i].fd);
		if (!ret)
			ret = bpf_map__set_pin_path(map, NULL); /* pinned already */
	}
	return ret;
}

/* Which of the conntrack lookups (bpf/lib/conntrack.h) this kernel offers, with bpf_ct_release. */
struct ct_kfuncs {
	bool skb;
	bool xdp;
};

static bool btf_has_func(const struct btf *btf, const char *name)
{
	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) > 0;
}

/*
 * Looked up before load, in vmlinux's BTF and nf_conntrack's (a module on
 * most distribution kernels, with BTF only while loaded): a program that
 * tests a kfunc's address itself needs Linux 6.4.
 */
static void probe_ct_kfuncs(struct ct_kfuncs *out)
{
	struct btf *vmlinux, *module;
	const struct btf *btf;

	out->skb = out->xdp = false;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		return;
	/* Split BTF: the module's lookups also search vmlinux. */
	module = btf__load_module_btf("nf_conntrack", vmlinux);
	btf = module ? module : vmlinux;
	if (btf_has_func(btf, "bpf_ct_release")) {
		out->skb = btf_has_func(btf, "bpf_skb_ct_lookup");
		out->xdp = btf_has_func(btf, "bpf_xdp_ct_lookup");
	}
	btf__free(module);
	btf__free(vmlinux);
}

bool velo_bpf_have_skb_ct_kfuncs(void)
{
	struct ct_kfuncs ct;

	probe_ct_kfuncs(&ct);
	return ct.skb;
}

static int tc_load(const struct bpf_object_open_opts *opts, const struct velo_paths *paths,
		   bool have_ct, struct veth_tc **out)
{
	struct veth_tc *tc;
	int ret;

	tc = veth_tc__open_opts(opts);
	if (!tc)
		return -errno;
	tc->rodata->velo_have_ct_kfuncs = have_ct;
	ret = reuse_pinned_maps(paths, tc->obj);
	if (!ret)
		ret = veth_tc__load(tc);
	if (ret) {
		veth_tc__destroy(tc);
		return ret;
	}
	*out = tc;
	return 0;
}

static int xdp_load(const struct bpf_object_open_opts *opts, const struct velo_paths *paths,
		    bool have_ct, struct veth_xdp **out)
{
	struct veth_xdp *xdp;
	int ret;

	xdp = veth_xdp__open_opts(opts);
	if (!xdp)
		return -errno;
	xdp->rodata->velo_have_ct_kfuncs = have_ct;
	ret = reuse_pinned_maps(paths, xdp->obj);
	if (!ret)
		ret = veth_xdp__load(xdp);
	if (ret) {
		veth_xdp__destroy(xdp);
		return ret;
	}
	*out = xdp;
	return 0;
}

/* A kernel whose kfuncs are there but refuse this program still gets the safe fast path. */
static void ct_load_failed(const char *name, int ret)
{
	pr_warn("%s with the conntrack lookup failed to load (%s): loading it without, NAT-able "
		"flows go to the stack",
		name, strerror(-ret));
}

int velo_bpf_load_prepare(const struct velo_paths *paths, struct bpf_object_open_opts *opts)
{
	char dir[PATH_MAX];
	int ret;

	memset(opts, 0, sizeof(*opts));
	opts->sz = sizeof(*opts);
	opts->pin_root_path = paths->bpffs_dir;
	ret = velo_bpf_gen_dir(paths, dir, sizeof(dir));
	return ret ? ret : lock_mkdirs(dir);
}

/* Under the loader lock: load both objects (the second reuses the first's pinned maps). */
static int load_and_pin(const struct velo_paths *paths, const void *arg)
{
	struct bpf_object_open_opts opts;
	struct veth_xdp *xdp = NULL;
	struct veth_tc *tc = NULL;
	struct ct_kfuncs ct;
	int ret;

	(void)arg; /* nothing to choose */
	ret = velo_bpf_load_prepare(paths, &opts);
	if (ret)
		return ret;
	probe_ct_kfuncs(&ct);
	if (!ct.skb || !ct.xdp)
		pr_info("conntrack lookup kfuncs: tc %s, xdp %s (nf_conntrack not loaded?): where "
			"missing, NAT-able flows go to the stack",
			ct.skb ? "found" : "missing", ct.xdp ? "found" : "missing");
	ret = tc_load(&opts, paths, ct.skb, &tc);
	if (ret && ct.skb) {
		ct_load_failed("veth_tc", ret);
		ret = tc_load(&opts, paths, false, &tc);
	}
	if (ret)
		goto out;
	ret = xdp_load(&opts, paths, ct.xdp, &xdp);
	if (ret && ct.xdp) {
		ct_load_failed("veth_xdp", ret);
		ret = xdp_load(&opts, paths, false, &xdp);
	}
	if (ret)
		goto out;
	ret = velo_pin_programs(paths, tc->obj, veth_pins, N_VETH_PINS);
	if (!ret)
		ret = velo_pin_programs(paths, xdp->obj, veth_pins, N_VETH_PINS);
	if (ret)
		goto out;
	pr_info("loaded and pinned velo's BPF objects under %s", paths->bpffs_dir);
out:
	veth_xdp__destroy(xdp);
	veth_tc__destroy(tc);
	return ret;
}

/* Under the loader lock: the per-pod cgroup objects (the second reuses the first's maps). */
static int load_and_pin_cgroup(const struct velo_paths *paths, const void *arg)
{
	struct bpf_object_open_opts opts;
	struct cgroup_sock *sock = NULL;
	struct cgroup_skb *skb = NULL;
	int ret;

	(void)arg; /* nothing to choose */
	ret = velo_bpf_load_prepare(paths, &opts);
	if (ret)
		return ret;
	skb = cgroup_skb__open_opts(&opts);
	if (!skb)
		return -errno;
	ret = reuse_pinned_maps(paths, skb->obj);
	if (!ret)
		ret = cgroup_skb__load(skb);
	if (ret)
		goto out;
	sock = cgroup_sock__open_opts(&opts);
	if (!sock) {
		ret = -errno;
		goto out;
	}
	ret = reuse_pinned_maps(paths, sock->obj);
	if (!ret)
		ret = cgroup_sock__load(sock);
	if (ret)
		goto out;
	ret = velo_pin_programs(paths, skb->obj, cgroup_pins, N_CGROUP_PINS);
	if (!ret)
		ret = velo_pin_programs(paths, sock->obj, cgroup_pins, N_CGROUP_PINS);
	if (ret)
		goto out;
	pr_info("loaded and pinned velo's cgroup BPF objects under %s", paths->bpffs_dir);
out:
	cgroup_sock__destroy(sock);
	cgroup_skb__destroy(skb);
	return ret;
}

static const struct pin_group veth_group = {
	.pins = veth_pins,
	.n_pins = N_VETH_PINS,
	.load = load_and_pin,
};

static const struct pin_group cgroup_group = {
	.pins = cgroup_pins,
	.n_pins = N_CGROUP_PINS,
	.load = load_and_pin_cgroup,
};

int velo_bpf_open_or_load(const struct velo_paths *paths, unsigned lock_timeout_ms,
			  const struct velo_pin *pins, size_t n_pins, void *fds,
			  int (*load)(const struct velo_paths *paths, const void *arg),
			  const void *arg)
{
	int lock_fd, ret;

	/* The common case: someone loaded already. */
	if (!velo_pins_open(paths, pins, n_pins, fds))
		return 0;
	velo_bpf_set_print();
	lock_fd = velo_bpf_loader_lock(paths, lock_timeout_ms);
	if (lock_fd < 0)
		return lock_fd;
	/* Mount and load happen only under the lock: never two bpffs mounts, never two loads. */
	ret = velo_pins_open(paths, pins, n_pins, fds);
	if (ret) {
		ret = velo_bpffs_prepare(paths->bpffs_dir);
		if (!ret)
			ret = load(paths, arg);
		if (!ret)
			ret = velo_pins_open(paths, pins, n_pins, fds);
		if (ret == -EAGAIN)
			ret = -EIO;
	}
	lock_release(lock_fd);
	return ret;
}

static int group_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
		      const struct pin_group *group, void *fds)
{
	return velo_bpf_open_or_load(paths, lock_timeout_ms, group->pins, group->n_pins, fds,
				     group->load, NULL);
}

int velo_bpf_open(const struct velo_paths *paths, unsigned lock_timeout_ms, struct velo_bpf *bpf)
{
	return group_open(paths, lock_timeout_ms, &veth_group, bpf);
}

int velo_bpf_open_pinned(const struct velo_paths *paths, struct velo_bpf *bpf)
{
	return group_open_pinned(paths, &veth_group, bpf);
}

void velo_bpf_close(struct velo_bpf *bpf)
{
	group_close(&veth_group, bpf);
}

int velo_bpf_cgroup_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
			 struct velo_bpf_cgroup *bpf)
{
	return group_open(paths, lock_timeout_ms, &cgroup_group, bpf);
}

int velo_bpf_cgroup_open_pinned(const struct velo_paths *paths, struct velo_bpf_cgroup *bpf)
{
	return group_open_pinned(paths, &cgroup_group, bpf);
}

void velo_bpf_cgroup_close(struct velo_bpf_cgroup *bpf)
{
	group_close(&cgroup_group, bpf);
}
