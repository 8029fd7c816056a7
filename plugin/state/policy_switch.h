/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NetworkPolicy's one switch on a node: <state_dir>/.policy-switch, "on" or
 * "off", written by velod from its policySource at start, read by ADD. In
 * state_dir (kept across reboots), not run_dir: after a reboot a pod wired
 * before velod is back still meets the last word velod said (on: fail
 * closed), not an empty tmpfs. Missing: velod never ran on this node, so no
 * one enforces policy and ADD attaches nothing.
 */
#ifndef VELO_STATE_POLICY_SWITCH_H
#define VELO_STATE_POLICY_SWITCH_H

#include <stdbool.h>

#include "base/types.h"

#define VELO_POLICY_SWITCH_FILE ".policy-switch"

enum velo_policy_switch {
	VELO_POLICY_SWITCH_UNSET, /* no file (or one velo can't read): velod never said */
	VELO_POLICY_SWITCH_OFF,
	VELO_POLICY_SWITCH_ON,
};

enum velo_policy_switch velo_policy_switch_read(const struct velo_paths *paths);
/* Written whole and renamed into place: 0 or -errno. */
int velo_policy_switch_write(const struct velo_paths *paths, bool on);

#endif
