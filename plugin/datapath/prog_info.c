// SPDX-License-Identifier: Apache-2.0
/* What the kernel says of a loaded program: its id, the maps it uses, the tc filter running it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "datapath/prog_info.h"

#define MAX_MAPS 16

unsigned velo_prog_id(int prog_fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(prog_fd, &info, &len) ? 0 : info.id;
}

unsigned velo_clsact_hook_prog_id(int ifindex, bool egress, __u32 handle, __u32 priority)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = handle, .priority = priority);
	/* No such filter (or no clsact at all) is an answer here, not a warning. */
	libbpf_print_fn_t saved = libbpf_set_print(NULL);
	int ret = bpf_tc_query(&hook, &opts);

	libbpf_set_print(saved);
	return ret ? 0 : opts.prog_id;
}

unsigned velo_clsact_prog_id(int ifindex, __u32 handle, __u32 priority)
{
	return velo_clsact_hook_prog_id(ifindex, false, handle, priority);
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* The ids of the velo_* maps a program uses, sorted (not its .rodata and friends): n or -errno. */
static int velo_map_ids(int prog_fd, __u32 *ids)
{
	__u32 all[MAX_MAPS], len = sizeof(struct bpf_prog_info);
	struct bpf_prog_info info;
	unsigned n = 0;

	memset(&info, 0, sizeof(info));
	info.nr_map_ids = MAX_MAPS;
	info.map_ids = (__u64)(unsigned long)all;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	if (info.nr_map_ids > MAX_MAPS)
		return -E2BIG;
	for (unsigned i = 0; i < info.nr_map_ids; i++) {
		struct bpf_map_info map;
		__u32 map_len = sizeof(map);
		int fd = bpf_map_get_fd_by_id(all[i]);

		if (fd < 0)
			return -errno;
		memset(&map, 0, sizeof(map));
		if (!bpf_obj_get_info_by_fd(fd, &map, &map_len) && !strncmp(map.name, "velo_", 5))
			ids[n++] = all[i];
		close(fd);
	}
	qsort(ids, n, sizeof(ids[0]), cmp_u32);
	return (int)n;
}

/*
 * The new program uses the very maps the old one did. A cgroup link keeps
 * the storage the kernel allocated for the old program's maps, and a
 * renamed (relaid-out) map would start without the pod's deny list and
 * readiness: such a pod stays where it is until it is re-created.
 */
int velo_prog_same_maps(int old_fd, int new_fd)
{
	__u32 old_ids[MAX_MAPS], new_ids[MAX_MAPS];
	int n_old = velo_map_ids(old_fd, old_ids), n_new = velo_map_ids(new_fd, new_ids);

	if (n_old < 0 || n_new < 0)
		return n_old < 0 ? n_old : n_new;
	if (n_old != n_new || memcmp(old_ids, new_ids, (size_t)n_old * sizeof(old_ids[0])))
		return -EXDEV;
	return 0;
}

/* 0 when new_prog_fd may replace the program old_prog_id, or -errno (-EXDEV: other maps). */
int velo_prog_replaceable(unsigned old_prog_id, int new_prog_fd)
{
	int old_fd = bpf_prog_get_fd_by_id(old_prog_id), ret;

	if (old_fd < 0)
		return -errno;
	ret = velo_prog_same_maps(old_fd, new_prog_fd);
	close(old_fd);
	return ret;
}

/* A pinned link onto prog_fd: 1 moved, 0 current (or on a cgroup that is gone), or -errno. */
int velo_link_move(int link_fd, int prog_fd)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int ret;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(link_fd, &info, &len))
		return -errno;
	if (info.prog_id == velo_prog_id(prog_fd) ||
	    (info.type == BPF_LINK_TYPE_CGROUP && !info.cgroup.cgroup_id))
		return 0;
	ret = velo_prog_replaceable(info.prog_id, prog_fd);
	if (!ret)
		ret = bpf_link_update(link_fd, prog_fd, NULL) ? -errno : 1;
	return ret;
}
