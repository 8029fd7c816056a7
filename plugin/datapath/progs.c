// SPDX-License-Identifier: Apache-2.0
/* Listing velo's BPF programs and maps by id, and turning run-time stats on for a window. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "datapath/progs.h"

#define STATS_SYSCTL "/proc/sys/kernel/bpf_stats_enabled"

uint64_t velo_monotonic_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

static bool is_velo_name(const char *name)
{
	return !strncmp(name, VELO_OBJ_PREFIX, strlen(VELO_OBJ_PREFIX));
}

static const char *prog_type_name(uint32_t type)
{
	const char *name = libbpf_bpf_prog_type_str((enum bpf_prog_type)type);

	return name ? name : "unknown";
}

static const char *map_type_name(uint32_t type)
{
	const char *name = libbpf_bpf_map_type_str((enum bpf_map_type)type);

	return name ? name : "unknown";
}

/* Grows *array (of elem_size items) to hold at least n + 1. */
static int grow(void **array, unsigned n, unsigned *cap, size_t elem_size)
{
	void *grown;
	unsigned new_cap;

	if (n < *cap)
		return 0;
	new_cap = *cap ? *cap * 2 : 16;
	grown = realloc(*array, new_cap * elem_size);
	if (!grown)
		return -ENOMEM;
	*array = grown;
	*cap = new_cap;
	return 0;
}

int velo_progs_sample(bool all, struct velo_prog_set *out)
{
	unsigned cap = 0;
	uint32_t id = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	for (;;) {
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);
		struct velo_prog_sample *sample;
		int fd;

		ret = bpf_prog_get_next_id(id, &id);
		if (ret == -ENOENT)
			break;
		if (ret)
			goto err;
		fd = bpf_prog_get_fd_by_id(id);
		if (fd == -ENOENT)
			continue; /* unloaded meanwhile */
		if (fd < 0) {
			ret = fd;
			goto err;
		}
		ret = bpf_obj_get_info_by_fd(fd, &info, &len);
		close(fd);
		if (ret)
			goto err;
		if (!all && !is_velo_name(info.name))
			continue;
		ret = grow((void **)&out->progs, out->n, &cap, sizeof(*out->progs));
		if (ret)
			goto err;
		sample = &out->progs[out->n++];
		sample->id = info.id;
		snprintf(sample->name, sizeof(sample->name), "%s", info.name);
		sample->type = prog_type_name(info.type);
		sample->run_cnt = info.run_cnt;
		sample->run_time_ns = info.run_time_ns;
	}
	out->taken_ns = velo_monotonic_ns();
	return 0;
err:
	velo_progs_free(out);
	return ret;
}

void velo_progs_free(struct velo_prog_set *set)
{
	free(set->progs);
	memset(set, 0, sizeof(*set));
}

void velo_progs_delta(const struct velo_prog_set *start, const struct velo_prog_set *end,
		      struct velo_prog_delta *out)
{
	for (unsigned i = 0; i < end->n; i++) {
		const struct velo_prog_sample *now = &end->progs[i], *before = NULL;

		for (unsigned j = 0; j < start->n && !before; j++)
			if (start->progs[j].id == now->id)
				before = &start->progs[j];
		out[i].prog = now;
		/* Ids are not reused while a program lives, so a smaller count is a new program. */
		if (before && now->run_cnt >= before->run_cnt &&
		    now->run_time_ns >= before->run_time_ns) {
			out[i].runs = now->run_cnt - before->run_cnt;
			out[i].run_time_ns = now->run_time_ns - before->run_time_ns;
		} else {
			out[i].runs = now->run_cnt;
			out[i].run_time_ns = now->run_time_ns;
		}
	}
}

/* Counts a map's keys; -1 where the type has no key iteration (arrays report max_entries). */
static long long count_entries(int fd, const struct bpf_map_info *info)
{
	void *key, *next;
	long long n = 0;

	switch (info->type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_PROG_ARRAY:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_DEVMAP:
	case BPF_MAP_TYPE_CPUMAP:
		return info->max_entries;
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_SK_STORAGE:
	case BPF_MAP_TYPE_INODE_STORAGE:
	case BPF_MAP_TYPE_TASK_STORAGE:
	case BPF_MAP_TYPE_STRUCT_OPS:
		return -1;
	default:
		break;
	}
	key = calloc(2, info->key_size ? info->key_size : 1);
	if (!key)
		return -1;
	next = (char *)key + (info->key_size ? info->key_size : 1);
	if (bpf_map_get_next_key(fd, NULL, next)) {
		n = errno == ENOENT ? 0 : -1;
		goto out;
	}
	do {
		n++;
		memcpy(key, next, info->key_size);
	} while (n <= info->max_entries && !bpf_map_get_next_key(fd, key, next));
out:
	free(key);
	return n;
}

int velo_maps_list(struct velo_map_entry **out, unsigned *n)
{
	struct velo_map_entry *maps = NULL;
	unsigned cap = 0, count = 0;
	uint32_t id = 0;
	int ret;

	for (;;) {
		struct bpf_map_info info = {};
		uint32_t len = sizeof(info);
		struct velo_map_entry *map;
		int fd;

		ret = bpf_map_get_next_id(id, &id);
		if (ret == -ENOENT)
			break;
		if (ret)
			goto err;
		fd = bpf_map_get_fd_by_id(id);
		if (fd == -ENOENT)
			continue;
		if (fd < 0) {
			ret = fd;
			goto err;
		}
		ret = bpf_obj_get_info_by_fd(fd, &info, &len);
		if (ret || !is_velo_name(info.name)) {
			close(fd);
			if (ret)
				goto err;
			continue;
		}
		ret = grow((void **)&maps, count, &cap, sizeof(*maps));
		if (ret) {
			close(fd);
			goto err;
		}
		map = &maps[count++];
		map->id = info.id;
		snprintf(map->name, sizeof(map->name), "%s", info.name);
		map->type = map_type_name(info.type);
		map->max_entries = info.max_entries;
		map->key_size = info.key_size;
		map->value_size = info.value_size;
		map->entries = count_entries(fd, &info);
		close(fd);
	}
	*out = maps;
	*n = count;
	return 0;
err:
	free(maps);
	return ret;
}

int velo_stats_enable(void)
{
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.enable_stats.type = BPF_STATS_RUN_TIME;
	fd = syscall(__NR_bpf, BPF_ENABLE_STATS, &attr, sizeof(attr.enable_stats));
	return fd < 0 ? -errno : (int)fd;
}

int velo_stats_active(void)
{
	FILE *file = fopen(STATS_SYSCTL, "re");
	int value = 0;

	if (!file)
		return -errno;
	if (fscanf(file, "%d", &value) != 1)
		value = -EIO;
	fclose(file);
	return value < 0 ? value : value != 0;
}
