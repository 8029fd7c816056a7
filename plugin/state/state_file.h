/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A node's small state files in state_dir, velod's word to ADD (.policy-switch,
 * .routing-overhead): written whole and renamed into place, so a concurrent ADD
 * reads the old text or the new, never a part.
 */
#ifndef VELO_STATE_STATE_FILE_H
#define VELO_STATE_STATE_FILE_H

#include <sys/types.h>

#include "base/types.h"

/* <state_dir>/<name> (not a symlink) into buf, NUL-terminated: its length, or -errno. */
ssize_t state_file_read(const struct velo_paths *paths, const char *name, char *buf, size_t len);
/* text into <state_dir>/<name> (0644) through <name>.tmp and a rename, state_dir made if
 * missing; 0 or -errno. */
int state_file_write(const struct velo_paths *paths, const char *name, const char *text);
/* Removes <state_dir>/<name>: 0, also when it wasn't there, or -errno. */
int state_file_remove(const struct velo_paths *paths, const char *name);

#endif
