// SPDX-License-Identifier: Apache-2.0
/* Pin paths under the bpffs dir, opening and closing pins, and bpffs itself. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/error.h"
#include "base/lock.h"
#include "base/log.h"
#include "base/mountinfo.h"
#include "bpf/lib/velo_shared.h"
#include "datapath/generation.h"
#include "datapath/pins.h"

static int *pin_fd(void *fds, const struct velo_pin *pin)
{
	return (int *)((char *)fds + pin->fd_offset);
}

int velo_pin_path(const struct velo_paths *paths, const struct velo_pin *pin, char *buf, size_t len)
{
	int n = pin->map	  ? snprintf(buf, len, "%s/%s", paths->bpffs_dir, pin->name)
		: pin->generation ? snprintf(buf, len, "%s/" VELO_BPF_GEN_PREFIX "%s/%s",
					     paths->bpffs_dir, velo_bpf_generation(), pin->name)
				  : snprintf(buf, len, "%s/%s/%s", paths->bpffs_dir,
					     VELO_BPF_PROGS_DIR, pin->name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int velo_map_pin_open(const struct velo_paths *paths, const char *name)
{
	const struct velo_pin pin = { .name = name, .map = true };
	char path[PATH_MAX];
	int fd, ret = velo_pin_path(paths, &pin, path, sizeof(path));

	if (ret)
		return ret;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

int velo_pin_program(const struct velo_paths *paths, const struct velo_pin *pin,
		     struct bpf_program *prog)
{
	char path[PATH_MAX];
	int ret = velo_pin_path(paths, pin, path, sizeof(path));

	if (ret)
		return ret;
	if (unlink(path) && errno != ENOENT)
		return -errno;
	return bpf_obj_pin(bpf_program__fd(prog), path) ? -errno : 0;
}

int velo_pin_programs(const struct velo_paths *paths, struct bpf_object *obj,
		      const struct velo_pin *pins, size_t n_pins)
{
	struct bpf_program *prog;
	int ret;

	bpf_object__for_each_program (prog, obj) {
		for (size_t i = 0; i < n_pins; i++) {
			if (pins[i].map || strcmp(pins[i].name, bpf_program__name(prog)))
				continue;
			ret = velo_pin_program(paths, &pins[i], prog);
			if (ret)
				return ret;
		}
	}
	return 0; /* a program no pin names is not one velo hands out */
}

void velo_pins_close(const struct velo_pin *pins, size_t n_pins, void *fds)
{
	for (size_t i = 0; i < n_pins; i++) {
		int *fd = pin_fd(fds, &pins[i]);

		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

int velo_bpf_read_link(const char *feature, const char *path, int prog_fd,
		       struct bpf_link_info *link, unsigned *prog_id)
{
	struct bpf_prog_info prog_info;
	__u32 len = sizeof(*link), prog_len = sizeof(prog_info);
	int fd = bpf_obj_get(path), ret = 0;

	if (fd < 0) {
		cni_error_detail("%s: link pin %s missing", feature, path);
		return -EIO;
	}
	memset(link, 0, sizeof(*link));
	memset(&prog_info, 0, sizeof(prog_info));
	if (bpf_obj_get_info_by_fd(fd, link, &len) ||
	    bpf_obj_get_info_by_fd(prog_fd, &prog_info, &prog_len)) {
		cni_error_detail("%s: link %s unreadable: %s", feature, path, strerror(errno));
		ret = -EIO;
	}
	*prog_id = prog_info.id;
	close(fd);
	return ret;
}

int velo_pins_open(const struct velo_paths *paths, const struct velo_pin *pins, size_t n_pins,
		   void *fds)
{
	char path[PATH_MAX];
	int ret;

	for (size_t i = 0; i < n_pins; i++)
		*pin_fd(fds, &pins[i]) = -1;
	for (size_t i = 0; i < n_pins; i++) {
		ret = velo_pin_path(paths, &pins[i], path, sizeof(path));
		if (ret)
			goto err_close;
		ret = bpf_obj_get(path);
		if (ret < 0) {
			ret = -errno;
			goto err_close;
		}
		*pin_fd(fds, &pins[i]) = ret;
	}
	return 0;

err_close:
	velo_pins_close(pins, n_pins, fds);
	return ret;
}

/* The kernel's id of the map or program fd, 0 when unreadable. */
static __u32 object_id(int fd, bool map)
{
	struct bpf_map_info map_info;
	struct bpf_prog_info prog_info;
	__u32 len = map ? sizeof(map_info) : sizeof(prog_info);

	memset(&map_info, 0, sizeof(map_info));
	memset(&prog_info, 0, sizeof(prog_info));
	if (bpf_obj_get_info_by_fd(fd, map ? (void *)&map_info : (void *)&prog_info, &len))
		return 0;
	return map ? map_info.id : prog_info.id;
}

bool velo_pins_current(const struct velo_paths *paths, const struct velo_pin *pins, size_t n_pins,
		       const void *fds)
{
	char path[PATH_MAX];
	bool same = true;

	for (size_t i = 0; same && i < n_pins; i++) {
		__u32 kept = object_id(*pin_fd((void *)fds, &pins[i]), pins[i].map);
		int fd =
			velo_pin_path(paths, &pins[i], path, sizeof(path)) ? -1 : bpf_obj_get(path);

		same = fd >= 0 && kept && object_id(fd, pins[i].map) == kept;
		if (fd >= 0)
			close(fd);
	}
	return same;
}

struct covering_mount {
	const char *dir;
	size_t best; /* the longest mount point seen that holds dir */
	int is_bpffs;
};

static int consider_mount(const char *mount_point, const char *fstype, void *ctx)
{
	struct covering_mount *covering = ctx;
	size_t len = strlen(mount_point);
	const char *dir = covering->dir;

	if (strcmp(mount_point, "/") &&
	    (strncmp(dir, mount_point, len) || (dir[len] != '/' && dir[len] != '\0')))
		return 0;
	/* Later lines are mounted on top of earlier ones at the same point. */
	if (len >= covering->best) {
		covering->best = len;
		covering->is_bpffs = !strcmp(fstype, "bpf");
	}
	return 0;
}

/* 1 when the mount that holds dir (longest matching mount point) is a bpffs, else 0. */
static int bpffs_covers(const char *dir)
{
	struct covering_mount covering = { .dir = dir };
	int ret = mountinfo_foreach(consider_mount, &covering);

	return ret ? ret : covering.is_bpffs;
}

int velo_bpffs_prepare(const char *bpffs_dir)
{
	char parent[PATH_MAX];
	char *slash;
	int ret;

	if (strlen(bpffs_dir) >= sizeof(parent) || bpffs_dir[0] != '/')
		return -EINVAL;
	ret = bpffs_covers(bpffs_dir);
	if (ret < 0)
		return ret;
	if (!ret) {
		strcpy(parent, bpffs_dir);
		slash = strrchr(parent, '/');
		if (slash == parent)
			return -EINVAL; /* a bpffs on / is not what anyone wants */
		*slash = '\0';
		ret = lock_mkdirs(parent);
		if (ret)
			return ret;
		if (mount("bpf", parent, "bpf", 0, "mode=0700"))
			return -errno;
		pr_info("mounted bpffs on %s", parent);
	}
	return lock_mkdirs(bpffs_dir);
}

int velo_bpf_link_path(const struct velo_paths *paths, const char *host_ifname, const char *kind,
		       char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/links/%s_%s", paths->bpffs_dir, host_ifname, kind);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int velo_bpf_loader_lock(const struct velo_paths *paths, unsigned lock_timeout_ms)
{
	char lock_path[PATH_MAX];

	if (snprintf(lock_path, sizeof(lock_path), "%s/bpf.lock", paths->run_dir) >=
	    (int)sizeof(lock_path))
		return -ENAMETOOLONG;
	return lock_acquire(lock_path, lock_timeout_ms);
}
