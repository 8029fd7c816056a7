// SPDX-License-Identifier: Apache-2.0
/*
 * Finding a pod's cgroup: the runtime's cgroupPath, then the kubelet's
 * cgroupfs and systemd names for every QoS class, under a fake cgroup2
 * mount (a temporary directory set as the conflist's "cgroupMount").
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/error.h"
#include "cgroup/pod.h"

#define UID "1f2e3d4c-0000-4a5b-8c9d-0123456789ab"
#define UID_SYSTEMD "1f2e3d4c_0000_4a5b_8c9d_0123456789ab"

struct fixture {
	char mount[PATH_MAX];
	struct velo_request request;
};

static void mkdirs(const char *mount, const char *rel)
{
	char path[PATH_MAX * 2], *p;

	snprintf(path, sizeof(path), "%s/%s", mount, rel);
	for (p = path + strlen(mount) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
	assert_int_equal(mkdir(path, 0700), 0);
}

static int setup(void **state)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));

	snprintf(fixture->mount, sizeof(fixture->mount), "/tmp/vt-pod-cgroup-XXXXXX");
	if (!mkdtemp(fixture->mount))
		return -1;
	snprintf(fixture->request.config.cgroup_mount, sizeof(fixture->request.config.cgroup_mount),
		 "%s", fixture->mount);
	cni_error_reset();
	*state = fixture;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fixture = *state;
	char command[PATH_MAX + 16];

	snprintf(command, sizeof(command), "rm -rf '%s'", fixture->mount);
	if (system(command))
		return -1;
	free(fixture);
	return 0;
}

/* The conflist's cgroupRoot, as config.c stores it. */
static void set_cgroup_root(struct fixture *fixture, const char *root)
{
	snprintf(fixture->request.config.cgroup_root, sizeof(fixture->request.config.cgroup_root),
		 "%s", root);
}

/* Finds with the given cgroupPath / uid; returns the path relative to the fake mount. */
static int find(struct fixture *fixture, const char *cgroup_path, const char *uid, char *rel)
{
	char found[PATH_MAX];
	int ret;

	snprintf(fixture->request.config.cgroup_path, sizeof(fixture->request.config.cgroup_path),
		 "%s", cgroup_path);
	snprintf(fixture->request.env.args.pod_uid, sizeof(fixture->request.env.args.pod_uid), "%s",
		 uid);
	ret = pod_cgroup_find(&fixture->request, found, sizeof(found));
	if (!ret) {
		size_t len = strlen(fixture->mount);

		assert_memory_equal(found, fixture->mount, len);
		strcpy(rel, found + len);
	}
	return ret;
}

static void assert_found(struct fixture *fixture, const char *dir, const char *cgroup_path,
			 const char *uid)
{
	char rel[PATH_MAX], expected[PATH_MAX];

	mkdirs(fixture->mount, dir);
	assert_int_equal(find(fixture, cgroup_path, uid, rel), 0);
	snprintf(expected, sizeof(expected), "/%s", dir);
	assert_string_equal(rel, expected);
}

static void test_cgroupfs_guaranteed(void **state)
{
	assert_found(*state, "kubepods/pod" UID, "", UID);
}

static void test_cgroupfs_burstable(void **state)
{
	assert_found(*state, "kubepods/burstable/pod" UID, "", UID);
}

static void test_cgroupfs_besteffort(void **state)
{
	assert_found(*state, "kubepods/besteffort/pod" UID, "", UID);
}

static void test_systemd_guaranteed(void **state)
{
	assert_found(*state, "kubepods.slice/kubepods-pod" UID_SYSTEMD ".slice", "", UID);
}

static void test_systemd_burstable(void **state)
{
	assert_found(*state,
		     "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_SYSTEMD
		     ".slice",
		     "", UID);
}

static void test_systemd_besteffort(void **state)
{
	assert_found(*state,
		     "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_SYSTEMD
		     ".slice",
		     "", UID);
}

static void test_cgroup_root_prefix(void **state)
{
	struct fixture *fixture = *state;

	set_cgroup_root(fixture, "/kubelet");
	assert_found(fixture, "kubelet/kubepods/burstable/pod" UID, "", UID);
}

static void test_cgroup_root_prefix_is_required(void **state)
{
	struct fixture *fixture = *state;
	char rel[PATH_MAX];

	/* With a root prefix configured, the same names outside it are not the pod's. */
	set_cgroup_root(fixture, "kubelet");
	mkdirs(fixture->mount, "kubepods/burstable/pod" UID);
	assert_int_equal(find(fixture, "", UID, rel), -ENOENT);
}

/* kubelet's systemd driver: cgroup root "/kube.slice" nests kubepods as kube-kubepods.slice. */
static void test_systemd_cgroup_root_slice(void **state)
{
	struct fixture *fixture = *state;

	set_cgroup_root(fixture, "/kube.slice");
	assert_found(fixture,
		     "kube.slice/kube-kubepods.slice/kube-kubepods-burstable.slice/"
		     "kube-kubepods-burstable-pod" UID_SYSTEMD ".slice",
		     "", UID);
}

static void test_systemd_cgroup_root_slice_guaranteed(void **state)
{
	struct fixture *fixture = *state;

	set_cgroup_root(fixture, "/kube.slice");
	assert_found(fixture,
		     "kube.slice/kube-kubepods.slice/kube-kubepods-pod" UID_SYSTEMD ".slice", "",
		     UID);
}

/* A nested slice name expands through each parent; kubelet's "/kube" names the same slice. */
static void test_systemd_cgroup_root_nested_slice(void **state)
{
	struct fixture *fixture = *state;

	set_cgroup_root(fixture, "/a-b.slice");
	assert_found(fixture,
		     "a.slice/a-b.slice/a-b-kubepods.slice/a-b-kubepods-besteffort.slice/"
		     "a-b-kubepods-besteffort-pod" UID_SYSTEMD ".slice",
		     "", UID);
}

static void test_systemd_cgroup_root_internal_name(void **state)
{
	struct fixture *fixture = *state;

	set_cgroup_root(fixture, "/kube");
	assert_found(fixture,
		     "kube.slice/kube-kubepods.slice/kube-kubepods-burstable.slice/"
		     "kube-kubepods-burstable-pod" UID_SYSTEMD ".slice",
		     "", UID);
}

static void test_cgroup_path_first(void **state)
{
	struct fixture *fixture = *state;

	/* Both exist: the runtime's word wins over the kubelet naming. */
	mkdirs(fixture->mount, "kubepods/pod" UID);
	assert_found(fixture, "custom/pod-sandbox", "/custom/pod-sandbox", UID);
}

static void test_cgroup_path_absolute_under_mount(void **state)
{
	struct fixture *fixture = *state;
	char absolute[PATH_MAX + 32];

	snprintf(absolute, sizeof(absolute), "%s/custom/abs", fixture->mount);
	assert_found(fixture, "custom/abs", absolute, "");
}

static void test_cgroup_path_systemd_slice(void **state)
{
	assert_found(*state,
		     "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_SYSTEMD
		     ".slice",
		     "kubepods-besteffort-pod" UID_SYSTEMD ".slice", "");
}

static void test_missing_cgroup_path_falls_to_uid(void **state)
{
	assert_found(*state, "kubepods/besteffort/pod" UID, "/gone/elsewhere", UID);
}

static void test_nothing_found_refuses_never_parent(void **state)
{
	struct fixture *fixture = *state;
	char rel[PATH_MAX];

	/* The QoS parents exist, the pod's own cgroup doesn't (no per-pod cgroups). */
	mkdirs(fixture->mount, "kubepods/burstable");
	assert_int_equal(find(fixture, "", UID, rel), -ENOENT);
	assert_int_equal(cni_error_get()->code, VELO_ERR_FEATURE);
	assert_non_null(strstr(cni_error_get()->msg, "kubepods/burstable/pod" UID));
	assert_non_null(strstr(cni_error_get()->msg, "never uses a parent"));
}

static void test_root_is_never_a_pod_cgroup(void **state)
{
	struct fixture *fixture = *state;
	char rel[PATH_MAX];

	assert_int_equal(find(fixture, "/", "", rel), -ENOENT);
	assert_int_equal(cni_error_get()->code, VELO_ERR_FEATURE);
	cni_error_reset();
	assert_int_equal(find(fixture, "", "", rel), -ENOENT);
	assert_non_null(strstr(cni_error_get()->msg, "neither cgroupPath nor K8S_POD_UID"));
}

static void test_dot_dot_refused(void **state)
{
	struct fixture *fixture = *state;
	char rel[PATH_MAX];

	mkdirs(fixture->mount, "a");
	assert_int_equal(find(fixture, "/a/..", "", rel), -EINVAL);
	assert_int_equal(cni_error_get()->code, VELO_ERR_FEATURE);
}

static void test_bad_uid_refused(void **state)
{
	struct fixture *fixture = *state;
	char rel[PATH_MAX];

	assert_int_equal(find(fixture, "", "../../etc", rel), -EINVAL);
	assert_non_null(strstr(cni_error_get()->msg, "K8S_POD_UID"));
}

static void test_mount_from_mountinfo(void **state)
{
	char mount[PATH_MAX];
	struct stat st;

	(void)state;
	/* Every machine velo runs on has a cgroup2 mount; where this one has none, skip. */
	if (pod_cgroup_mount(mount, sizeof(mount)) == -ENOENT)
		skip();
	assert_int_equal(mount[0], '/');
	assert_int_equal(stat(mount, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_cgroupfs_guaranteed),
		T(test_cgroupfs_burstable),
		T(test_cgroupfs_besteffort),
		T(test_systemd_guaranteed),
		T(test_systemd_burstable),
		T(test_systemd_besteffort),
		T(test_cgroup_root_prefix),
		T(test_cgroup_root_prefix_is_required),
		T(test_systemd_cgroup_root_slice),
		T(test_systemd_cgroup_root_slice_guaranteed),
		T(test_systemd_cgroup_root_nested_slice),
		T(test_systemd_cgroup_root_internal_name),
		T(test_cgroup_path_first),
		T(test_cgroup_path_absolute_under_mount),
		T(test_cgroup_path_systemd_slice),
		T(test_missing_cgroup_path_falls_to_uid),
		T(test_nothing_found_refuses_never_parent),
		T(test_root_is_never_a_pod_cgroup),
		T(test_dot_dot_refused),
		T(test_bad_uid_refused),
		T(test_mount_from_mountinfo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
