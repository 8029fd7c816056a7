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

#include "base/lock.h"
#include "base/log.h"
#include "bpf/lib/velo_sockmap.h"
#include "datapath/flow_maps.h"
#include "datapath/loader.h"
#include "datapath/prog_info.h"
#include "datapath/sockmap_bpf.h"
#include "datapath/sockmap_msg.h"
#include "sockmap.skel.h"

#define LINKS_DIR "links"
#define DEFAULT_APPLY_BYTES (1u << 20)

/* The program pins last: their presence means the load finished. */
static const struct velo_pin pins[] = {
	{ VELO_MAP_SOCKHASH, true, offsetof(struct velo_sockmap_bpf, sockhash_fd), false },
	{ VELO_MAP_SM_PODS, true, offsetof(struct velo_sockmap_bpf, pods_fd), false },
	{ VELO_MAP_SM_ACCT, true, offsetof(struct velo_sockmap_bpf, acct_fd), false },
	{ VELO_MAP_SM_STATS, true, offsetof(struct velo_sockmap_bpf, stats_fd), false },
	{ VELO_PROG_SOCKOPS, false, offsetof(struct velo_sockmap_bpf, sockops_prog_fd), true },
	{ VELO_PROG_SK_MSG, false, offsetof(struct velo_sockmap_bpf, msg_prog_fd), true },
};
#define N_PINS (sizeof(pins) / sizeof(pins[0]))
#define SOCKOPS_PIN (N_PINS - 2)
#define SK_MSG_PIN (N_PINS - 1)

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

/*
 * The sk_msg program of a new load goes onto the sockhash (upgrade/sockmap.c):
 * an older generation's link moves in place. One that uses other maps stays.
 */
static int msg_attach_loaded(const struct velo_paths *paths, int prog_fd, int sockhash_fd)
{
	int ret = velo_sockmap_msg_attach(paths, prog_fd, sockhash_fd);

	if (ret != -EXDEV)
		return ret < 0 ? ret : 0;
	pr_warn("sockmap: the sk_msg link stays on a program that uses other maps than this "
		"velo's; connections of pods wired from now on are not redirected");
	return 0;
}

/* Under the loader lock; arg is the kernel's struct velo_sockmap_features. */
static int load_and_pin(const struct velo_paths *paths, const void *arg)
{
	const struct velo_sockmap_features *features = arg;
	struct bpf_object_open_opts opts;
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
	ret = velo_bpf_load_prepare(paths, &opts);
	if (!ret)
		ret = pin_path(paths, NULL, LINKS_DIR, dir, sizeof(dir));
	if (!ret)
		ret = lock_mkdirs(dir);
	if (ret)
		return ret;
	skel = sockmap__open_opts(&opts);
	if (!skel)
		return -errno;
	skel->rodata->sm_mode = mode;
	skel->rodata->sm_apply_bytes = apply_bytes;
	skel->rodata->sm_permanent_flag = mode == VELO_SM_PERMANENT ? features->permanent_flag : 0;
	ret = velo_flow_maps_fit(skel->obj, paths);
	if (!ret)
		ret = sockmap__load(skel);
	if (ret)
		goto out;
	ret = msg_attach_loaded(paths, bpf_program__fd(skel->progs.velo_sk_msg),
				bpf_map__fd(skel->maps.velo_sock_v1));
	if (!ret)
		ret = velo_pin_program(paths, &pins[SOCKOPS_PIN], skel->progs.velo_sockops);
	if (!ret)
		ret = velo_pin_program(paths, &pins[SK_MSG_PIN], skel->progs.velo_sk_msg);
	if (!ret)
		pr_info("sockmap: loaded (%s, %u-byte steps) and pinned under %s",
			velo_sockmap_mode_str(mode), apply_bytes, paths->bpffs_dir);
out:
	sockmap__destroy(skel);
	return ret;
}

int velo_sockmap_msg_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
			     const struct velo_sockmap_bpf *bpf)
{
	/* A generation's first load attaches sk_msg under it too. */
	int lock_fd = velo_bpf_loader_lock(paths, lock_timeout_ms), ret;

	if (lock_fd < 0)
		return lock_fd;
	ret = velo_sockmap_msg_attach(paths, bpf->msg_prog_fd, bpf->sockhash_fd);
	lock_release(lock_fd);
	return ret;
}

int velo_sockmap_bpf_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
			  const struct velo_sockmap_features *features,
			  struct velo_sockmap_bpf *bpf)
{
	return velo_bpf_open_or_load(paths, lock_timeout_ms, pins, N_PINS, bpf, load_and_pin,
				     features);
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

static bool key_is_pod(const struct velo_sm_key *key, uint64_t cookie,
		       const struct velo_sm_addr *addrs, unsigned n_addrs)
{
	if (key->netns_cookie == cookie)
		return true;
	for (unsigned i = 0; i < n_addrs; i++)
		if (!memcmp(key->remote, addrs[i].addr, sizeof(key->remote)))
			return true;
	return false;
}

int velo_sockmap_forget_pod(int sockhash_fd, uint64_t cookie, const struct velo_sm_addr *addrs,
			    unsigned n_addrs)
{
	struct velo_sm_key keys[2], *prev = NULL, *next = &keys[0];
	bool drop_prev = false;
	int removed = 0;

	/*
	 * The next key is read before the previous one goes: a sockhash walk
	 * from a key that's gone starts over. Bounded: sockets come and go.
	 */
	for (unsigned steps = 0; steps < 2 * VELO_MAX_SOCKETS; steps++) {
		int ret = bpf_map_get_next_key(sockhash_fd, prev, next);

		if (drop_prev && !bpf_map_delete_elem(sockhash_fd, prev))
			removed++;
		if (ret)
			break;
		drop_prev = key_is_pod(next, cookie, addrs, n_addrs);
		prev = next;
		next = next == &keys[0] ? &keys[1] : &keys[0];
	}
	return removed;
}
