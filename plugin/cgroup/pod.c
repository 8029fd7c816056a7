// SPDX-License-Identifier: Apache-2.0
/*
 * Finding a pod's own cgroup (v2). Two optional conflist fields (config.c
 * reads them):
 *   "cgroupRoot":  the kubelet's --cgroup-root ("/" by default): a path
 *                  prefix for the cgroupfs driver, the slice kubepods
 *                  nests under for the systemd driver ("/kube.slice" ->
 *                  kube.slice/kube-kubepods.slice/...)
 *   "cgroupMount": the cgroup2 mount to use instead of the one found in
 *                  /proc/self/mountinfo (nested setups; unit tests)
 * The candidates, in order: the runtime's cgroupPath (a path under the
 * mount, or a systemd slice name), then the kubelet's names from
 * K8S_POD_UID for both cgroup drivers and every QoS class. A candidate must
 * be a directory strictly below the mount: never the root, never a parent.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/log.h"
#include "base/mountinfo.h"
#include "cgroup/pod.h"

struct mount_buf {
	char *buf;
	size_t len;
};

/* The first cgroup2 mount: 1 once copied, -ENAMETOOLONG when it doesn't fit. */
static int take_cgroup2(const char *mount_point, const char *fstype, void *ctx)
{
	struct mount_buf *out = ctx;

	if (strcmp(fstype, "cgroup2"))
		return 0;
	if (snprintf(out->buf, out->len, "%s", mount_point) >= (int)out->len)
		return -ENAMETOOLONG;
	return 1;
}

int pod_cgroup_mount(char *buf, size_t len)
{
	struct mount_buf out = { buf, len };
	int ret = mountinfo_foreach(take_cgroup2, &out);

	return ret == 1 ? 0 : ret ? ret : -ENOENT;
}

/* No "..", no empty components that could climb out of the mount. */
static bool path_is_plain(const char *path)
{
	const char *p = path;

	while (*p) {
		size_t n = strcspn(p, "/");

		if ((n == 2 && !strncmp(p, "..", 2)) || (n == 1 && p[0] == '.'))
			return false;
		p += n;
		while (*p == '/')
			p++;
	}
	return true;
}

/*
 * A systemd slice name to its path: "a-b-c.slice" -> "a.slice/a-b.slice/a-b-c.slice".
 * A "slice:prefix:name" scope spec keeps only its slice. 0, or -EINVAL when it isn't one.
 */
static int slice_to_path(const char *name, char *buf, size_t len)
{
	char slice[NAME_MAX + 1];
	size_t n = strcspn(name, ":"), used = 0;

	if (n == 0 || n >= sizeof(slice) || strchr(name, '/'))
		return -EINVAL;
	memcpy(slice, name, n);
	slice[n] = '\0';
	if (n <= 6 || strcmp(slice + n - 6, ".slice"))
		return -EINVAL;
	slice[n - 6] = '\0';
	buf[0] = '\0';
	for (const char *dash = slice;; dash++) {
		dash = strchr(dash, '-');
		int w = snprintf(buf + used, len - used, "%s%.*s.slice", used ? "/" : "",
				 dash ? (int)(dash - slice) : (int)strlen(slice), slice);

		if (w < 0 || (size_t)w >= len - used)
			return -ENAMETOOLONG;
		used += (size_t)w;
		if (!dash)
			return 0;
	}
}

struct search {
	const char *mount;
	char tried[1024];
	size_t tried_len;
};

/* 1 when mount/rel is a directory strictly below the mount (path into buf), else 0. */
static int try_candidate(struct search *search, const char *root, const char *rel, char *buf,
			 size_t len)
{
	char path[PATH_MAX];
	struct stat st;
	int n;

	while (*rel == '/')
		rel++;
	while (root && *root == '/')
		root++;
	n = snprintf(path, sizeof(path), "%s%s%s/%s", search->mount, root && *root ? "/" : "",
		     root ? root : "", rel);
	if (n < 0 || (size_t)n >= sizeof(path) || !*rel || !path_is_plain(rel) ||
	    (root && !path_is_plain(root)))
		return 0;
	/* Trim trailing slashes so the result names the directory itself. */
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		if (search->tried_len < sizeof(search->tried)) {
			int w = snprintf(search->tried + search->tried_len,
					 sizeof(search->tried) - search->tried_len, "%s%s",
					 search->tried_len ? ", " : "", path);

			if (w > 0)
				search->tried_len += (size_t)w;
		}
		return 0;
	}
	if ((size_t)n >= len)
		return 0;
	memcpy(buf, path, (size_t)n + 1);
	return 1;
}

/* The runtime's cgroupPath: a path under the mount (or the mount's own absolute path), or a slice. */
static int try_cgroup_path(struct search *search, const char *cgroup_path, char *buf, size_t len)
{
	size_t mount_len = strlen(search->mount);
	char rel[PATH_MAX];

	if (!slice_to_path(cgroup_path, rel, sizeof(rel)))
		return try_candidate(search, NULL, rel, buf, len);
	if (!strncmp(cgroup_path, search->mount, mount_len) && cgroup_path[mount_len] == '/' &&
	    try_candidate(search, NULL, cgroup_path + mount_len, buf, len))
		return 1;
	return try_candidate(search, NULL, cgroup_path, buf, len);
}

static bool uid_valid(const char *uid)
{
	size_t n = strlen(uid);

	return n > 0 && n < 64 && strspn(uid, "0123456789abcdefABCDEF-") == n;
}

/*
 * The systemd driver's prefix for a cgroupRoot: kubelet names the root's
 * slice, so "/kube.slice" (or its internal form "/kube") puts kubepods
 * under kube.slice as kube-kubepods.slice (pkg/kubelet/cm, ToSystemd:
 * name components joined by "-", a "-" inside one written "_"). "" for "/".
 */
static void systemd_root_prefix(const char *root, char *buf, size_t len)
{
	char copy[PATH_MAX];
	size_t n, used = 0;
	const char *base;

	buf[0] = '\0';
	if (!root)
		return;
	snprintf(copy, sizeof(copy), "%s", root);
	n = strlen(copy);
	while (n && copy[n - 1] == '/')
		copy[--n] = '\0';
	base = strrchr(copy, '/');
	base = base ? base + 1 : copy;
	n = strlen(base);
	if (n > 6 && !strcmp(base + n - 6, ".slice")) {
		/* A slice name (or its expanded path): the last one's name is the prefix. */
		snprintf(buf, len, "%.*s", (int)(n - 6), base);
		return;
	}
	for (const char *c = copy; *c && used + 1 < len; c++) {
		if (*c == '/') {
			if (used && buf[used - 1] != '-')
				buf[used++] = '-';
			continue;
		}
		buf[used++] = *c == '-' ? '_' : *c;
	}
	buf[used] = '\0';
}

/* The systemd driver's pod slice under prefix ("" = the root), expanded to a path. */
static int try_systemd_pod(struct search *search, const char *prefix, const char *qos,
			   const char *systemd_uid, char *buf, size_t len)
{
	char name[NAME_MAX * 2], rel[PATH_MAX];
	int n;

	n = snprintf(name, sizeof(name), "%s%skubepods%s%s-pod%s.slice", prefix, *prefix ? "-" : "",
		     *qos ? "-" : "", qos, systemd_uid);
	if (n < 0 || (size_t)n >= sizeof(name) || slice_to_path(name, rel, sizeof(rel)))
		return 0;
	return try_candidate(search, NULL, rel, buf, len);
}

/* The kubelet's names: cgroupfs driver, then systemd driver; Guaranteed, Burstable, BestEffort. */
static int try_pod_uid(struct search *search, const char *root, const char *uid, char *buf,
		       size_t len)
{
	static const char *const qos[] = { "", "burstable", "besteffort" };
	char systemd_uid[64], rel[PATH_MAX], prefix[NAME_MAX + 1];

	snprintf(systemd_uid, sizeof(systemd_uid), "%s", uid);
	for (char *c = systemd_uid; *c; c++)
		if (*c == '-')
			*c = '_';
	for (size_t i = 0; i < sizeof(qos) / sizeof(qos[0]); i++) {
		snprintf(rel, sizeof(rel), "kubepods%s%s/pod%s", *qos[i] ? "/" : "", qos[i], uid);
		if (try_candidate(search, root, rel, buf, len))
			return 1;
	}
	systemd_root_prefix(root, prefix, sizeof(prefix));
	for (size_t i = 0; i < sizeof(qos) / sizeof(qos[0]); i++)
		if (try_systemd_pod(search, prefix, qos[i], systemd_uid, buf, len))
			return 1;
	if (!prefix[0])
		return 0;
	/* Older kubelets put kubepods.slice itself under the root's directory. */
	for (size_t i = 0; i < sizeof(qos) / sizeof(qos[0]); i++) {
		if (*qos[i])
			snprintf(rel, sizeof(rel),
				 "kubepods.slice/kubepods-%s.slice/kubepods-%s-pod%s.slice", qos[i],
				 qos[i], systemd_uid);
		else
			snprintf(rel, sizeof(rel), "kubepods.slice/kubepods-pod%s.slice",
				 systemd_uid);
		if (try_candidate(search, root, rel, buf, len))
			return 1;
	}
	return 0;
}

int pod_cgroup_find(const struct velo_request *request, char *buf, size_t len)
{
	const char *cgroup_path = request->config.cgroup_path;
	const char *uid = request->env.args.pod_uid;
	struct search search = { 0 };
	const char *root = request->config.cgroup_root[0] ? request->config.cgroup_root : NULL;
	const char *mount = request->config.cgroup_mount;
	char found_mount[PATH_MAX];
	int ret;

	if (root && !path_is_plain(root))
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
				"cgroupRoot: %s must not contain . or ..", root);
	if (!mount[0]) {
		ret = pod_cgroup_mount(found_mount, sizeof(found_mount));
		if (ret)
			return cni_fail(ret, VELO_ERR_FEATURE,
					"no cgroup2 mount in /proc/self/mountinfo: %s",
					strerror(-ret));
		mount = found_mount;
	}
	search.mount = mount;

	if (cgroup_path[0]) {
		if (!path_is_plain(cgroup_path))
			return cni_fail(-EINVAL, VELO_ERR_FEATURE,
					"cgroupPath %s must not contain . or ..", cgroup_path);
		if (try_cgroup_path(&search, cgroup_path, buf, len))
			return 0;
	}
	if (uid[0]) {
		if (!uid_valid(uid))
			return cni_fail(-EINVAL, VELO_ERR_FEATURE,
					"K8S_POD_UID %s is not a pod UID", uid);
		if (try_pod_uid(&search, root, uid, buf, len))
			return 0;
	}
	if (!cgroup_path[0] && !uid[0])
		return cni_fail(-ENOENT, VELO_ERR_FEATURE,
				"no pod cgroup: the runtime passed neither cgroupPath nor "
				"K8S_POD_UID");
	return cni_fail(-ENOENT, VELO_ERR_FEATURE,
			"no pod cgroup found: per-pod programs need the pod's own cgroup and "
			"velo never uses a parent (tried %s)",
			search.tried);
}
