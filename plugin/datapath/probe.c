// SPDX-License-Identifier: Apache-2.0
/* Runtime probes of the kernel's BPF features velo's fast paths need, cached per boot. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>

#include "base/file_replace.h"
#include "base/lock.h"
#include "base/log.h"
#include "datapath/probe.h"

/* Debian 12's uapi headers predate tcx (Linux 6.6): the kernel's values. */
#define VELO_BPF_TCX_INGRESS 46

#define PROBE_CACHE "bpf-probes"
#define PROBE_VETH "velo-probe0"

static int prog_load_trivial(enum bpf_prog_type type, enum bpf_attach_type expected, int ret)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = ret },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = expected);
	int fd = bpf_prog_load(type, "velo_probe", "GPL", insns, 2, &opts);

	return fd < 0 ? -errno : fd;
}

/* A devmap entry that carries a program: what per-destination counters need. */
static bool probe_devmap_prog(void)
{
	struct bpf_devmap_val val = { .ifindex = 1 /* lo */ };
	int map_fd, prog_fd;
	bool ok = false;

	map_fd = bpf_map_create(BPF_MAP_TYPE_DEVMAP_HASH, "velo_probe", 4, sizeof(val), 1, NULL);
	if (map_fd < 0)
		return false;
	prog_fd = prog_load_trivial(BPF_PROG_TYPE_XDP, BPF_XDP_DEVMAP, XDP_PASS);
	if (prog_fd >= 0) {
		val.bpf_prog.fd = prog_fd;
		ok = !bpf_map_update_elem(map_fd, &val.ifindex, &val, BPF_ANY);
		close(prog_fd);
	}
	close(map_fd);
	return ok;
}

/* A read-only tcx query on lo: kernels without tcx reject the attach type. */
static bool probe_tcx(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.query.target_fd = 1; /* target_ifindex for tcx */
	attr.query.attach_type = VELO_BPF_TCX_INGRESS;
	return syscall(__NR_bpf, BPF_PROG_QUERY, &attr, sizeof(attr)) == 0;
}

/* In a child in a private netns: a veth pair and a driver-mode XDP attach. */
static int probe_xdp_veth_child(void)
{
	struct rtnl_link *link;
	struct nl_sock *sock;
	int ifindex, prog_fd, ret;

	if (unshare(CLONE_NEWNET))
		return 2;
	sock = nl_socket_alloc();
	if (!sock)
		return 2;
	link = nl_connect(sock, NETLINK_ROUTE) ? NULL : rtnl_link_veth_alloc();
	if (!link) {
		nl_socket_free(sock);
		return 2;
	}
	rtnl_link_set_name(link, PROBE_VETH);
	ret = rtnl_link_add(sock, link, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_link_put(link);
	nl_socket_free(sock);
	if (ret)
		return 2;
	ifindex = (int)if_nametoindex(PROBE_VETH);
	prog_fd = prog_load_trivial(BPF_PROG_TYPE_XDP, BPF_XDP, XDP_PASS);
	if (ifindex <= 0 || prog_fd < 0)
		return 2;
	return bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_DRV_MODE, NULL) ? 1 : 0;
}

static bool probe_xdp_native_veth(void)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0)
		_exit(probe_xdp_veth_child()); /* the netns and its veth die with the child */
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	(void)fmt;
	(void)args;
	return 0;
}

void velo_bpf_probe_uncached(struct velo_bpf_features *out)
{
	/* Failed test loads are the expected answer here, not warnings. */
	libbpf_print_fn_t saved = libbpf_set_print(silent_print);

	memset(out, 0, sizeof(*out));
	out->redirect_peer =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_SCHED_CLS, BPF_FUNC_redirect_peer, NULL) > 0;
	out->check_mtu =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, BPF_FUNC_check_mtu, NULL) > 0 &&
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_SCHED_CLS, BPF_FUNC_check_mtu, NULL) > 0;
	out->tcx = probe_tcx();
	out->devmap_prog = probe_devmap_prog();
	out->xdp_native_veth = probe_xdp_native_veth();
	libbpf_set_print(saved);
}

static void boot_id(char *buf, size_t len)
{
	FILE *file = fopen("/proc/sys/kernel/random/boot_id", "re");

	buf[0] = '\0';
	if (!file)
		return;
	if (!fgets(buf, (int)len, file))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(file);
}

static int cache_path(const struct velo_paths *paths, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", paths->run_dir, PROBE_CACHE);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Format: "<boot id> <redirect_peer> <tcx> <check_mtu> <devmap_prog> <xdp_native_veth>\n". */
static int cache_read(const struct velo_paths *paths, struct velo_bpf_features *out)
{
	char path[PATH_MAX], id[64], cached_id[64];
	int v[5], n;
	FILE *file;

	if (cache_path(paths, path, sizeof(path)))
		return -ENAMETOOLONG;
	file = fopen(path, "re");
	if (!file)
		return -errno;
	n = fscanf(file, "%63s %d %d %d %d %d", cached_id, &v[0], &v[1], &v[2], &v[3], &v[4]);
	fclose(file);
	boot_id(id, sizeof(id));
	if (n != 6 || !id[0] || strcmp(id, cached_id))
		return -ESTALE;
	out->redirect_peer = v[0];
	out->tcx = v[1];
	out->check_mtu = v[2];
	out->devmap_prog = v[3];
	out->xdp_native_veth = v[4];
	return 0;
}

static void cache_write(const struct velo_paths *paths, const struct velo_bpf_features *in)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16], id[64], text[128];
	int len;

	boot_id(id, sizeof(id));
	if (!id[0] || cache_path(paths, path, sizeof(path)) || lock_mkdirs(paths->run_dir))
		return;
	/* Concurrent ADDs probe alike: a temp per writer, the rename makes the file whole. */
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	len = snprintf(text, sizeof(text), "%s %d %d %d %d %d\n", id, in->redirect_peer, in->tcx,
		       in->check_mtu, in->devmap_prog, in->xdp_native_veth);
	if (len > 0 && len < (int)sizeof(text))
		velo_file_replace(path, tmp, text, (size_t)len, 0600);
}

void velo_bpf_probe(const struct velo_paths *paths, struct velo_bpf_features *out)
{
	if (!cache_read(paths, out))
		return;
	velo_bpf_probe_uncached(out);
	pr_info("bpf probes: redirect_peer=%d tcx=%d check_mtu=%d devmap_prog=%d "
		"xdp_native_veth=%d",
		out->redirect_peer, out->tcx, out->check_mtu, out->devmap_prog,
		out->xdp_native_veth);
	cache_write(paths, out);
}

const char *velo_bpf_missing(const struct velo_bpf_features *features, bool xdp)
{
	if (!features->check_mtu)
		return "bpf_check_mtu";
	if (!xdp)
		return features->redirect_peer ? NULL : "bpf_redirect_peer";
	if (!features->devmap_prog)
		return "devmap programs";
	if (!features->xdp_native_veth)
		return "native XDP on veth";
	return NULL;
}
