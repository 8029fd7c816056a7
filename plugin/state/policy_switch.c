// SPDX-License-Identifier: Apache-2.0
/* NetworkPolicy's switch file in state_dir (policy_switch.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/file_replace.h"
#include "base/lock.h"
#include "state/policy_switch.h"

static int switch_path(const struct velo_paths *paths, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", paths->state_dir, VELO_POLICY_SWITCH_FILE);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

enum velo_policy_switch velo_policy_switch_read(const struct velo_paths *paths)
{
	char path[PATH_MAX], text[8] = "";
	ssize_t n;
	int fd;

	if (switch_path(paths, path, sizeof(path)))
		return VELO_POLICY_SWITCH_UNSET;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return VELO_POLICY_SWITCH_UNSET;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return VELO_POLICY_SWITCH_UNSET;
	text[n] = '\0';
	if (!strcmp(text, "on\n"))
		return VELO_POLICY_SWITCH_ON;
	if (!strcmp(text, "off\n"))
		return VELO_POLICY_SWITCH_OFF;
	return VELO_POLICY_SWITCH_UNSET;
}

int velo_policy_switch_write(const struct velo_paths *paths, bool on)
{
	const char *text = on ? "on\n" : "off\n";
	char path[PATH_MAX];
	int ret;

	ret = switch_path(paths, path, sizeof(path));
	if (!ret)
		ret = lock_mkdirs(paths->state_dir);
	if (!ret)
		ret = velo_file_replace(path, NULL, text, strlen(text), 0644);
	return ret;
}
