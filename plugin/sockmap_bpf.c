// SPDX-License-Identifier: Apache-2.0
/* Loads the socket short-circuit's BPF objects once per node and pins them. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../bpf/lib/velo_sockmap.h"
#include "bpf_loader.h"
#include "lock.h"
#include "log.h"
#include "sockmap.skel.h"
#include "sockmap_bpf.h"

#define BPF_LOCK_NAME "bpf.lock" /* the BPF loader lock of bpf_loader.h */
#define PROGS_DIR VELO_BPF_PROGS_DIR
#define LINKS_DIR "links"
#define DEFAULT_APPLY_BYTES (1u << 20)

/* The program pins last: their presence means the load finished. */
static const struct velo_pin pins[] = {
	{ VELO_MAP_SOCKHASH, true, offsetof(struct velo_sockmap_bpf, sockhash_fd), false },
	{ VELO_MAP_SM_PODS, true, offsetof(struct velo_sockmap_bpf, pods_fd), false },
	{ VELO_MAP_SM_ACCT, true, offsetof(struct velo_sockmap_bpf, acct_fd), false },
	{ VELO_MAP_SM_STATS, true, offsetof(struct velo_sockmap_bpf, stats_fd), false },
	{ VELO_PROG_SOCKOPS, false, offsetof(struct velo_sockmap_bpf, sockops_prog_fd), false },
	{ VELO_PROG_SK_MSG, false, offsetof(struct velo_sockmap_bpf, msg_prog_fd), false },
};
#define N_PINS (sizeof(pins) / sizeof(pins[0]))

static const char *const mode_names[] = {
	[VELO_SM_APPLY_BYTES] = "apply-bytes",
	[VELO_SM_PER_MESSAGE] = "per-message",
	[VELO_SM_PERMANENT] = "permanent",
};

const char *velo_sockmap_mode_str(unsigned mode)
{
	return mode < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[mode] : NULL;
}

static int pin_path(const struct velo_paths *paths, const char *dir, const char *name, char *buf,
		    size_t len)
{
	int n = dir ? snprintf(buf, len, "%s/%s/%s", paths->bpffs_dir, dir, name)
		    : snprintf(buf, len, "%s/%s", paths->bpffs_dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int velo_sockmap_link_path(const struct velo_paths *paths, const char *host_ifname, char *buf,
			   size_t len)
{
	int n = snprintf(buf, len, "%s/%s/%s_sockops", paths->bpffs_dir, LINKS_DIR, host_ifname);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

void velo_sockmap_bpf_close(struct velo_sockmap_bpf *bpf)
{
	velo_pins_close(pins, N_PINS, bpf);
}

int velo_sockmap_bpf_open_pinned(const struct velo_paths *paths, struct velo_sockmap_bpf *bpf)
{
	return velo_pins_open(paths, pins, N_PINS, bpf);
}

/* The default is the fastest mode this kernel can do; the environment overrides (benchmarks). */
static int choose_mode(const struct velo_sockmap_features *features, unsigned *mode,
		       unsigned *apply_bytes)
{
	const char *env = getenv(VELO_ENV_SOCKMAP_MODE);

	*mode = features->permanent_flag ? VELO_SM_PERMANENT : VELO_SM_APPLY_BYTES;
	*apply_bytes = DEFAULT_APPLY_BYTES;
	if (env && *env) {
		unsigned i;

		for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
			if (!strcmp(env, mode_names[i]))
				break;
		if (i == sizeof(mode_names) / sizeof(mode_names[0]))
			return -EINVAL;
		if (i == VELO_SM_PERMANENT && !features->permanent_flag) {
			pr_warn("sockmap: %s=permanent but this kernel has no BPF_F_PERMANENT; "
				"using apply-bytes",
				VELO_ENV_SOCKMAP_MODE);
			i = VELO_SM_APPLY_BYTES;
		}
		*mode = i;
	}
	env = getenv(VELO_ENV_SOCKMAP_APPLY_BYTES);
	if (env && *env) {
		char *end;
		unsigned long value = strtoul(env, &end, 0);

		if (*end || !value || value > UINT32_MAX)
			return -EINVAL;
		*apply_bytes = (unsigned)value;
	}
	return 0;
}

static int pin_program(const struct velo_paths *paths, struct bpf_program *prog)
{
	char path[PATH_MAX];
	int ret = pin_path(paths, PROGS_DIR, bpf_program__name(prog), path, sizeof(path));

	if (ret)
		return ret;
	if (unlink(path) && errno != ENOENT) /* a half-finished earlier load */
		return -errno;
	return bpf_obj_pin(bpf_program__fd(prog), path) ? -errno : 0;
}

/*
 * sk_msg on the sockhash: a pinned bpf_link where the kernel has sockmap
 * links (6.10+); else the legacy attach, which the pinned map itself keeps.
 */
static int attach_sk_msg(const struct velo_paths *paths, int prog_fd, int sockhash_fd)
{
	char path[PATH_MAX];
	int link_fd, ret;

	ret = pin_path(paths, LINKS_DIR, VELO_LINK_SK_MSG, path, sizeof(path));
	if (ret)
		return ret;
	if (unlink(path) && errno != ENOENT)
		return -errno;
	link_fd = bpf_link_create(prog_fd, sockhash_fd, BPF_SK_MSG_VERDICT, NULL);
	if (link_fd < 0) {
		pr_debug("sockmap: no sockmap bpf_link (%s); legacy attach", strerror(errno));
		return bpf_prog_attach(prog_fd, sockhash_fd, BPF_SK_MSG_VERDICT, 0) ? -errno : 0;
	}
	ret = bpf_obj_pin(link_fd, path) ? -errno : 0;
	close(link_fd);
	return ret;
}

static int load_and_pin(const struct velo_paths *paths,
			const struct velo_sockmap_features *features)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = paths->bpffs_dir);
	unsigned mode, apply_bytes;
	struct sockmap *skel;
	char dir[PATH_MAX];
	int ret;

	ret = choose_mode(features, &mode, &apply_bytes);
	if (ret) {
		pr_warn("sockmap: bad %s or %s", VELO_ENV_SOCKMAP_MODE,
			VELO_ENV_SOCKMAP_APPLY_BYTES);
		return ret;
	}
	for (int i = 0; i < 2; i++) {
		ret = pin_path(paths, NULL, i ? LINKS_DIR : PROGS_DIR, dir, sizeof(dir));
		if (!ret)
			ret = lock_mkdirs(dir);
		if (ret)
			return ret;
	}
	skel = sockmap__open_opts(&opts);
	if (!skel)
		return -errno;
	skel->rodata->sm_mode = mode;
	skel->rodata->sm_apply_bytes = apply_bytes;
	skel->rodata->sm_permanent_flag = mode == VELO_SM_PERMANENT ? features->permanent_flag : 0;
	ret = sockmap__load(skel);
	if (ret)
		goto out;
	ret = attach_sk_msg(paths, bpf_program__fd(skel->progs.velo_sk_msg),
			    bpf_map__fd(skel->maps.velo_sock_v1));
	if (!ret)
		ret = pin_program(paths, skel->progs.velo_sockops);
	if (!ret)
		ret = pin_program(paths, skel->progs.velo_sk_msg);
	if (!ret)
		pr_info("sockmap: loaded (%s, %u-byte steps) and pinned under %s",
			velo_sockmap_mode_str(mode), apply_bytes, paths->bpffs_dir);
out:
	sockmap__destroy(skel);
	return ret;
}

int velo_sockmap_bpf_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
			  const struct velo_sockmap_features *features,
			  struct velo_sockmap_bpf *bpf)
{
	char lock_path[PATH_MAX];
	int lock_fd, ret;

	if (!velo_sockmap_bpf_open_pinned(paths, bpf))
		return 0;
	velo_bpf_set_print();
	if (snprintf(lock_path, sizeof(lock_path), "%s/%s", paths->run_dir, BPF_LOCK_NAME) >=
	    (int)sizeof(lock_path))
		return -ENAMETOOLONG;
	lock_fd = lock_acquire(lock_path, lock_timeout_ms);
	if (lock_fd < 0)
		return lock_fd;
	ret = velo_sockmap_bpf_open_pinned(paths, bpf);
	if (ret) {
		ret = velo_bpffs_prepare(paths->bpffs_dir);
		if (!ret)
			ret = load_and_pin(paths, features);
		if (!ret)
			ret = velo_sockmap_bpf_open_pinned(paths, bpf);
	}
	lock_release(lock_fd);
	return ret;
}

void velo_sockmap_pod_key(const struct velo_ip *ip, struct velo_sm_addr *key)
{
	memset(key, 0, sizeof(*key));
	if (ip->family == AF_INET) {
		key->addr[10] = 0xff; /* ::ffff:a.b.c.d, as sock_ops sees IPv4 */
		key->addr[11] = 0xff;
		memcpy(&key->addr[12], ip->addr, 4);
	} else {
		memcpy(key->addr, ip->addr, 16);
	}
}
