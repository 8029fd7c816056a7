/* SPDX-License-Identifier: Apache-2.0 */
/* Reading /proc/self/mountinfo: each mount's point and filesystem type, in the kernel's order. */
#ifndef VELO_BASE_MOUNTINFO_H
#define VELO_BASE_MOUNTINFO_H

/*
 * Calls fn with each mount's point (octal escapes undone) and fstype, in file
 * order (a later line is mounted on top of an earlier one at the same point).
 * Stops at the first non-zero answer of fn and returns it; 0 when fn answered
 * 0 throughout; -errno when the file can't be opened.
 */
int mountinfo_foreach(int (*fn)(const char *mount_point, const char *fstype, void *ctx), void *ctx);

#endif
