/* SPDX-License-Identifier: Apache-2.0 */
/* Types and limits every layer shares: where velo keeps its files, how long a network name is. */
#ifndef VELO_BASE_TYPES_H
#define VELO_BASE_TYPES_H

#include <limits.h>

#define VELO_NAME_MAX 128

/* Where velo keeps things; each configurable so simulated nodes can share a machine. */
struct velo_paths {
	char state_dir[PATH_MAX]; /* endpoint records, default /var/lib/velo */
	char run_dir[PATH_MAX]; /* locks and caches, default /run/velo */
	char bpffs_dir[PATH_MAX]; /* pins, default /sys/fs/bpf/velo */
	char log_file[PATH_MAX]; /* default /var/log/velo/cni.log */
};

#endif
