/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finding a pod's own cgroup (v2). From the runtimeConfig cgroupPath when
 * the runtime passes it (containerd >= 1.7), else from K8S_POD_UID and the
 * kubelet's naming (cgroupfs and systemd drivers, every QoS class, an
 * optional cgroup root: a path prefix, or a slice), under the cgroup2 mount found in
 * /proc/self/mountinfo. Never falls back to a parent.
 */
#ifndef VELO_CGROUP_POD_H
#define VELO_CGROUP_POD_H

#include <stddef.h>

#include "cni/request.h"

/* The cgroup2 mount point, e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified. */
int pod_cgroup_mount(char *buf, size_t len);
/*
 * The absolute path of the pod's cgroup directory into buf. -ENOENT with
 * code 107 and a message naming what was tried when there is none.
 */
int pod_cgroup_find(const struct velo_request *request, char *buf, size_t len);

#endif
