// SPDX-License-Identifier: Apache-2.0
/* NetworkPolicy's switch file in state_dir (policy_switch.h). */
#include <string.h>

#include "state/policy_switch.h"
#include "state/state_file.h"

enum velo_policy_switch velo_policy_switch_read(const struct velo_paths *paths)
{
	char text[8];

	if (state_file_read(paths, VELO_POLICY_SWITCH_FILE, text, sizeof(text)) <= 0)
		return VELO_POLICY_SWITCH_UNSET;
	if (!strcmp(text, "on\n"))
		return VELO_POLICY_SWITCH_ON;
	if (!strcmp(text, "off\n"))
		return VELO_POLICY_SWITCH_OFF;
	return VELO_POLICY_SWITCH_UNSET;
}

int velo_policy_switch_write(const struct velo_paths *paths, bool on)
{
	return state_file_write(paths, VELO_POLICY_SWITCH_FILE, on ? "on\n" : "off\n");
}
