// SPDX-License-Identifier: Apache-2.0
/* The flow events' pinned ring buffer and loss counter (flow_maps.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/lock.h"
#include "bpf/lib/velo_flow.h"
#include "datapath/flow_maps.h"
#include "datapath/pins.h"

static int pin_path(const struct velo_paths *paths, const char *name, char *buf, size_t len)
{
	if (snprintf(buf, len, "%s/%s", paths->bpffs_dir, name) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int velo_flow_rb_open(const struct velo_paths *paths, uint32_t *ring_bytes)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, ret;

	ret = pin_path(paths, VELO_MAP_FLOW_RB, path, sizeof(path));
	if (ret)
		return ret;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != BPF_MAP_TYPE_RINGBUF) {
		ret = errno && info.type != BPF_MAP_TYPE_RINGBUF ? -errno : -EINVAL;
		close(fd);
		return ret ? ret : -EINVAL;
	}
	if (ring_bytes)
		*ring_bytes = info.max_entries;
	return fd;
}

int velo_flow_maps_fit(struct bpf_object *obj, const struct velo_paths *paths)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, VELO_MAP_FLOW_RB);
	uint32_t ring_bytes;
	int fd;

	if (!map)
		return 0; /* the object writes no flow events */
	fd = velo_flow_rb_open(paths, &ring_bytes);
	if (fd == -ENOENT)
		return 0; /* this load pins it, at the object's size */
	if (fd < 0)
		return fd;
	close(fd);
	return bpf_map__set_max_entries(map, ring_bytes);
}

/* Under the loader lock, in a bpffs velo mounted: no load can pin another ring meanwhile. */
static int create_locked(const struct velo_paths *paths, uint32_t ring_bytes)
{
	char path[PATH_MAX];
	int fd, ret;

	fd = velo_flow_rb_open(paths, NULL);
	if (fd >= 0) {
		close(fd);
		return 0; /* pinned before: its size stays */
	}
	if (fd != -ENOENT)
		return fd;
	ret = velo_bpffs_prepare(paths->bpffs_dir);
	if (!ret)
		ret = pin_path(paths, VELO_MAP_FLOW_RB, path, sizeof(path));
	if (ret)
		return ret;
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, VELO_MAP_FLOW_RB, 0, 0, ring_bytes, NULL);
	if (fd < 0)
		return -errno;
	ret = bpf_obj_pin(fd, path) ? -errno : 0;
	close(fd);
	return ret;
}

int velo_flow_rb_create(const struct velo_paths *paths, uint32_t ring_bytes,
			unsigned lock_timeout_ms)
{
	int lock_fd, ret;

	lock_fd = velo_bpf_loader_lock(paths, lock_timeout_ms);
	if (lock_fd < 0)
		return lock_fd;
	ret = create_locked(paths, ring_bytes);
	lock_release(lock_fd);
	return ret;
}

void velo_flow_counters(const struct velo_paths *paths, uint64_t counts[VELO_FLOW_N_COUNTS])
{
	int n_cpus = libbpf_num_possible_cpus();
	char path[PATH_MAX];
	uint64_t *values;
	int fd;

	memset(counts, 0, VELO_FLOW_N_COUNTS * sizeof(*counts));
	if (n_cpus <= 0 || pin_path(paths, VELO_MAP_FLOW_LOST, path, sizeof(path)))
		return;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	values = calloc((size_t)n_cpus, sizeof(*values));
	for (__u32 key = 0; values && key < VELO_FLOW_N_COUNTS; key++)
		if (!bpf_map_lookup_elem(fd, &key, values))
			for (int i = 0; i < n_cpus; i++)
				counts[key] += values[i];
	free(values);
	close(fd);
}
