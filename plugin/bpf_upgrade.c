// SPDX-License-Identifier: Apache-2.0
/* Moving pods to this generation's fast-path programs, then unpinning the old ones. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../bpf/lib/velo_shared.h"
#include "bpf_upgrade.h"
#include "lock.h"
#include "log.h"

/* Where velo pinned the fast path's programs before generations: beside the other groups'. */
static const char *const legacy_progs[] = { VELO_PROG_TC_INGRESS, VELO_PROG_XDP_HOST,
					    VELO_PROG_XDP_DST };

static int unpin(const char *path, bool remove, unsigned *count)
{
	if (access(path, F_OK))
		return 0;
	(*count)++;
	if (remove && unlink(path)) {
		pr_warn("upgrade: unpin %s: %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}

/* A generation dir: its pins, then itself. */
static int unpin_dir(const char *path, bool remove, unsigned *count)
{
	DIR *dir = opendir(path);
	struct dirent *entry;
	char child[PATH_MAX];
	int ret = 0;

	if (!dir)
		return -errno;
	while ((entry = readdir(dir)))
		if (entry->d_name[0] != '.' && snprintf(child, sizeof(child), "%s/%s", path,
							entry->d_name) < (int)sizeof(child))
			ret = unpin(child, remove, count) ?: ret;
	closedir(dir);
	if (remove && rmdir(path) && !ret)
		ret = -errno;
	return ret;
}

/* Counts (and with remove, unpins) what no program of this generation uses. */
static int old_pins(const struct velo_paths *paths, bool remove, unsigned *count)
{
	char current[NAME_MAX + 1], path[PATH_MAX];
	DIR *dir = opendir(paths->bpffs_dir);
	struct dirent *entry;
	int ret = 0;

	*count = 0;
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	snprintf(current, sizeof(current), VELO_BPF_GEN_PREFIX "%s", velo_bpf_generation());
	while ((entry = readdir(dir))) {
		const char *name = entry->d_name;

		if (snprintf(path, sizeof(path), "%s/%s", paths->bpffs_dir, name) >=
		    (int)sizeof(path))
			continue;
		if (!strncmp(name, VELO_BPF_GEN_PREFIX, strlen(VELO_BPF_GEN_PREFIX)) &&
		    strcmp(name, current)) {
			ret = unpin_dir(path, remove, count) ?: ret;
		} else if (!strcmp(name, VELO_BPF_PROGS_DIR)) {
			for (size_t i = 0; i < sizeof(legacy_progs) / sizeof(legacy_progs[0]); i++)
				if (snprintf(path, sizeof(path), "%s/%s/%s", paths->bpffs_dir, name,
					     legacy_progs[i]) < (int)sizeof(path))
					ret = unpin(path, remove, count) ?: ret;
		} else if (velo_map_pin_superseded(name)) {
			ret = unpin(path, remove, count) ?: ret;
		}
	}
	closedir(dir);
	return ret;
}

struct pass {
	const struct velo_paths *paths;
	const struct velo_bpf *bpf;
	struct velo_upgrade *out;
};

/* Under the attachment lock, as ADD and DEL change an endpoint only under it. */
static int upgrade_record(const struct velo_record *listed, void *arg)
{
	struct pass *pass = arg;
	struct velo_record record = { 0 };
	char path[PATH_MAX];
	int fd, ret;

	if (listed->phase != VELO_PHASE_READY || !listed->features)
		return 0;
	if (state_lock_path(pass->paths, listed->network, listed->container_id, listed->ifname,
			    path, sizeof(path)))
		return 0;
	fd = lock_try(path);
	if (fd < 0) {
		pass->out->busy += fd == -EWOULDBLOCK;
		pass->out->failed += fd != -EWOULDBLOCK;
		return 0;
	}
	/* Read again under the lock: a DEL may have finished meanwhile. */
	ret = state_record_read(pass->paths, listed->network, listed->container_id, listed->ifname,
				&record);
	if (ret) {
		lock_release_unlink(fd, path);
		return 0;
	}
	ret = velo_fastpath_upgrade(pass->paths, &record, pass->bpf);
	if (ret < 0) {
		pass->out->failed++;
		pr_warn("upgrade: %s/%s (veth %s) stays on its old programs: %s",
			record.container_id, record.ifname, record.host_ifname, strerror(-ret));
	} else if (ret) {
		pass->out->moved++;
		pr_info("upgrade: %s/%s (veth %s) moved to BPF generation %s", record.container_id,
			record.ifname, record.host_ifname, velo_bpf_generation());
	}
	state_record_free(&record);
	lock_release(fd);
	return 0;
}

static int upgrade_network(const char *network, void *arg)
{
	struct pass *pass = arg;

	return state_record_foreach(pass->paths, network, upgrade_record, pass);
}

int velo_bpf_upgrade(const struct velo_paths *paths, unsigned lock_timeout_ms,
		     struct velo_upgrade *out)
{
	struct velo_bpf bpf;
	struct pass pass = { .paths = paths, .bpf = &bpf, .out = out };
	unsigned old;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = old_pins(paths, false, &old);
	if (ret)
		return ret;
	/* Nothing old and nothing loaded: no pod has a fast path. */
	ret = old ? velo_bpf_open(paths, lock_timeout_ms, &bpf) : velo_bpf_open_pinned(paths, &bpf);
	if (ret == -ENOENT && !old)
		return 0;
	if (ret)
		return ret;
	ret = state_network_foreach(paths, upgrade_network, &pass);
	velo_bpf_close(&bpf);
	if (ret || out->busy || out->failed)
		return ret; /* the old programs stay until every pod has moved */
	ret = old_pins(paths, true, &out->unpinned);
	if (out->moved || out->unpinned)
		pr_info("upgrade: BPF generation %s: %u endpoint(s) moved, %u old pin(s) removed",
			velo_bpf_generation(), out->moved, out->unpinned);
	return ret;
}
