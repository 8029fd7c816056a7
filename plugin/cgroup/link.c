// SPDX-License-Identifier: Apache-2.0
/* bpf_links on a pod's own cgroup, pinned per endpoint, taken over by a restarted sandbox. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "base/error.h"
#include "base/lock.h"
#include "base/log.h"
#include "bpf/lib/velo_shared.h"
#include "cgroup/link.h"
#include "cgroup/pod.h"

#define CGROUP_LOCK_NAME "cgroup.lock"

uint64_t cgroup_id_of(const char *path)
{
	struct stat st;

	/* On cgroup2 a directory's inode number is the cgroup id (kernfs node id). */
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

int cgroup_lock_at(const struct velo_paths *paths, unsigned timeout_ms)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", paths->run_dir, CGROUP_LOCK_NAME) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	return lock_acquire(path, timeout_ms);
}

int cgroup_lock(const struct velo_request *request)
{
	return cgroup_lock_at(&request->config.paths, request->config.lock_timeout_ms);
}

void cgroup_unlock(int lock_fd)
{
	if (lock_fd >= 0)
		lock_release(lock_fd);
}

int cgroup_ctx_open(struct velo_request *request, const char *feature, struct cgroup_ctx *ctx)
{
	int ret;

	memset(ctx, 0, sizeof(*ctx));
	ctx->request = request;
	ctx->cgroup_fd = -1;
	ctx->lock_fd = -1;
	ret = pod_cgroup_find(request, ctx->path, sizeof(ctx->path));
	if (ret)
		return cni_fail(ret, VELO_ERR_FEATURE, "%s: no pod cgroup", feature);
	ctx->cgroup_fd = open(ctx->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ctx->cgroup_fd < 0) {
		ret = -errno;
		return cni_fail(ret, VELO_ERR_FEATURE, "%s: open cgroup %s: %s", feature, ctx->path,
				strerror(-ret));
	}
	ctx->cgroup_id = cgroup_id_of(ctx->path);
	request->record.cgroup_id = ctx->cgroup_id; /* velod and veloctl read counters by it */
	ctx->lock_fd = cgroup_lock(request);
	if (ctx->lock_fd < 0) {
		ret = ctx->lock_fd;
		close(ctx->cgroup_fd);
		ctx->cgroup_fd = -1;
		if (ret == -EAGAIN)
			return cni_fail(ret, CNI_ERR_TRY_AGAIN,
					"%s: cgroup lock busy; try again later", feature);
		return cni_fail(ret, VELO_ERR_FEATURE, "%s: cgroup lock: %s", feature,
				strerror(-ret));
	}
	ret = velo_bpf_cgroup_open(&request->config.paths, request->config.lock_timeout_ms,
				   &ctx->bpf);
	if (ret) {
		cgroup_ctx_close(ctx);
		if (ret == -EAGAIN)
			return cni_fail(ret, CNI_ERR_TRY_AGAIN,
					"%s: the BPF loader lock is busy; try again later",
					feature);
		return cni_fail(ret, VELO_ERR_FEATURE,
				"%s: velo's cgroup BPF programs can't be loaded: %s", feature,
				strerror(-ret));
	}
	ctx->bpf_open = true;
	pr_debug("%s: pod cgroup %s (id %llu)", feature, ctx->path,
		 (unsigned long long)ctx->cgroup_id);
	return 0;
}

void cgroup_ctx_close(struct cgroup_ctx *ctx)
{
	if (ctx->bpf_open)
		velo_bpf_cgroup_close(&ctx->bpf);
	ctx->bpf_open = false;
	cgroup_unlock(ctx->lock_fd);
	ctx->lock_fd = -1;
	if (ctx->cgroup_fd >= 0)
		close(ctx->cgroup_fd);
	ctx->cgroup_fd = -1;
}

/* fd's link is a cgroup link at type on cgroup_id. */
static bool link_is_on(int fd, enum bpf_attach_type type, uint64_t cgroup_id)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return !bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_CGROUP &&
	       info.cgroup.cgroup_id == cgroup_id && info.cgroup.attach_type == (__u32)type;
}

static int links_dir(const struct velo_request *request, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/links", request->config.paths.bpffs_dir);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return mkdir(buf, 0700) && errno != EEXIST ? -errno : 0;
}

/*
 * Another endpoint's link of kind on our cgroup: an earlier sandbox of this
 * pod. Returns its fd (its pin path in old_path) or -ENOENT.
 */
static int find_earlier_link(struct cgroup_ctx *ctx, const char *kind, enum bpf_attach_type type,
			     const char *own_path, char *old_path, size_t len)
{
	char dir[PATH_MAX], suffix[64];
	struct dirent *entry;
	int fd = -ENOENT;
	DIR *links;

	if (links_dir(ctx->request, dir, sizeof(dir)))
		return -ENOENT;
	snprintf(suffix, sizeof(suffix), "_%s", kind);
	links = opendir(dir);
	if (!links)
		return -ENOENT;
	while (fd < 0 && (entry = readdir(links))) {
		size_t name_len = strlen(entry->d_name), suffix_len = strlen(suffix);
		int candidate;

		if (name_len <= suffix_len ||
		    strcmp(entry->d_name + name_len - suffix_len, suffix) ||
		    snprintf(old_path, len, "%s/%s", dir, entry->d_name) >= (int)len ||
		    !strcmp(old_path, own_path))
			continue;
		candidate = bpf_obj_get(old_path);
		if (candidate < 0)
			continue;
		if (link_is_on(candidate, type, ctx->cgroup_id))
			fd = candidate;
		else
			close(candidate);
	}
	closedir(links);
	return fd;
}

int cgroup_link_attach(struct cgroup_ctx *ctx, const char *kind, int prog_fd,
		       enum bpf_attach_type type)
{
	const struct velo_request *request = ctx->request;
	char path[PATH_MAX], old_path[PATH_MAX], dir[PATH_MAX];
	int fd, ret;

	ret = links_dir(request, dir, sizeof(dir));
	if (!ret)
		ret = velo_bpf_link_path(&request->config.paths, request->record.host_ifname, kind,
					 path, sizeof(path));
	if (ret)
		return ret;

	/* Ours already (a retried ADD): bring it to today's program. */
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		if (link_is_on(fd, type, ctx->cgroup_id)) {
			ret = bpf_link_update(fd, prog_fd, NULL) ? -errno : 0;
			close(fd);
			return ret;
		}
		close(fd);
		if (unlink(path) && errno != ENOENT)
			return -errno;
	}

	/* An earlier sandbox of this pod: take its link over instead of running twice. */
	while ((fd = find_earlier_link(ctx, kind, type, path, old_path, sizeof(old_path))) >= 0) {
		if (bpf_link_update(fd, prog_fd, NULL) || bpf_obj_pin(fd, path)) {
			ret = -errno;
			close(fd);
			return ret;
		}
		close(fd);
		unlink(old_path);
		pr_info("cgroup %s: took over %s from an earlier sandbox", ctx->path, old_path);
		/* Any further one would run twice: unpinning detaches it. */
		while ((fd = find_earlier_link(ctx, kind, type, path, old_path,
					       sizeof(old_path))) >= 0) {
			close(fd);
			unlink(old_path);
		}
		return 0;
	}

	fd = bpf_link_create(prog_fd, ctx->cgroup_fd, type, NULL);
	if (fd < 0)
		return -errno;
	ret = bpf_obj_pin(fd, path) ? -errno : 0;
	close(fd); /* unpinned, the link dies here */
	return ret;
}

int cgroup_config_write(struct cgroup_ctx *ctx, const char *tcp_cc)
{
	struct velo_cg_config config;
	__u64 key = ctx->cgroup_id;

	/* The storage exists once a program that uses it is attached. */
	if (bpf_map_lookup_elem(ctx->bpf.config_fd, &key, &config))
		return -errno;
	config.cgroup_id = ctx->cgroup_id;
	config.flags |= VELO_CG_F_READY;
	if (tcp_cc)
		snprintf(config.tcp_cc, sizeof(config.tcp_cc), "%s", tcp_cc);
	return bpf_map_update_elem(ctx->bpf.config_fd, &key, &config, BPF_EXIST) ? -errno : 0;
}

void cgroup_link_unpin(const struct velo_request *request, const char *kind)
{
	char path[PATH_MAX];

	if (!request->record.host_ifname[0] ||
	    velo_bpf_link_path(&request->config.paths, request->record.host_ifname, kind, path,
			       sizeof(path)))
		return;
	if (unlink(path) && errno != ENOENT)
		pr_warn("unpin %s: %s", path, strerror(errno));
}

int cgroup_link_check(const struct velo_request *request, const char *feature, const char *kind,
		      enum bpf_attach_type type, int prog_fd, uint64_t cgroup_id)
{
	struct bpf_link_info link_info;
	char path[PATH_MAX];
	unsigned prog_id;

	if (velo_bpf_link_path(&request->config.paths, request->record.host_ifname, kind, path,
			       sizeof(path)))
		return -ENAMETOOLONG;
	if (velo_bpf_read_link(feature, path, prog_fd, &link_info, &prog_id))
		return -EIO;
	if (link_info.type != BPF_LINK_TYPE_CGROUP || !link_info.cgroup.cgroup_id ||
	    link_info.cgroup.attach_type != (__u32)type) {
		cni_error_detail("%s: link %s is not attached to a cgroup any more", feature, path);
		return -EIO;
	}
	if (cgroup_id && link_info.cgroup.cgroup_id != cgroup_id) {
		cni_error_detail("%s: link %s is on cgroup %llu, not the pod's %llu", feature, path,
				 (unsigned long long)link_info.cgroup.cgroup_id,
				 (unsigned long long)cgroup_id);
		return -EIO;
	}
	if (link_info.prog_id != prog_id) {
		cni_error_detail("%s: link %s runs program %u, not velo's %u", feature, path,
				 link_info.prog_id, prog_id);
		return -EIO;
	}
	return 0;
}
