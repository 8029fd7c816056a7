/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Endpoint records under <state_dir>/<network>/<container>:<ifname>.json
 * (older velos wrote <container>_<ifname>.json: still read and removed, see
 * state.c).
 * ADD writes the record before each side effect (with the phase it is about
 * to enter), so a DEL or GC after a crash knows what to undo. Until the ADD
 * is ready the record lives under <run_dir>/pending/<network>/ instead (see
 * state.c); read, remove and foreach look in both. Writes are atomic (temp
 * file, rename), files are 0600 in 0700 directories.
 */
#ifndef VELO_STATE_STATE_H
#define VELO_STATE_STATE_H

#include <limits.h>
#include <stdint.h>

#include <cJSON.h>

#include "base/addr.h"
#include "base/types.h"

#include "state/record.h"

int state_record_write(const struct velo_paths *paths, const struct velo_record *record);
/* -ENOENT when there is none. */
int state_record_read(const struct velo_paths *paths, const char *network, const char *container_id,
		      const char *ifname, struct velo_record *out);
/* Missing is success. */
int state_record_remove(const struct velo_paths *paths, const char *network,
			const char *container_id, const char *ifname);
/* Calls fn for every readable record of network; stops at and returns fn's first non-zero. */
typedef int (*state_record_fn)(const struct velo_record *record, void *ctx);
int state_record_foreach(const struct velo_paths *paths, const char *network, state_record_fn fn,
			 void *ctx);
/* Calls fn for every network directory under paths->state_dir (none when it doesn't exist);
 * stops at and returns fn's first non-zero. */
typedef int (*state_network_fn)(const char *network, void *ctx);
int state_network_foreach(const struct velo_paths *paths, state_network_fn fn, void *ctx);

/*
 * Temp files a writer killed before its rename left in network's record dirs
 * (both): fn gets each one's path and its attachment's "<container>:<ifname>"
 * (or, from older velos, "<container>_<ifname>", whose lock has that name too).
 * Older velos named them ".<attachment>.tmp.XXXXXX"; those are listed too.
 * Stops at and returns fn's first non-zero.
 */
typedef int (*state_temp_fn)(const char *path, const char *attachment, void *ctx);
int state_temp_foreach(const struct velo_paths *paths, const char *network, state_temp_fn fn,
		       void *ctx);

/* <run_dir>/locks/<network>/<container>:<ifname>.lock */
int state_lock_path(const struct velo_paths *paths, const char *network, const char *container_id,
		    const char *ifname, char *buf, unsigned len);

#endif
