// SPDX-License-Identifier: Apache-2.0
/*
 * The one reader of /proc/self/mountinfo (the cgroup2 mount for the pod
 * cgroup lookup, the bpffs that holds velo's pins).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/mountinfo.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *text)
{
	char *out = text;

	for (const char *in = text; *in; out++) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' &&
		    in[3] >= '0' && in[3] <= '7') {
			*out = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
			in += 4;
		} else {
			*out = *in++;
		}
	}
	*out = '\0';
}

int mountinfo_foreach(int (*fn)(const char *mount_point, const char *fstype, void *ctx), void *ctx)
{
	char line[4096], mount_point[PATH_MAX], fstype[64];
	int ret = 0;
	FILE *file;

	file = fopen("/proc/self/mountinfo", "re");
	if (!file)
		return -errno;
	while (!ret && fgets(line, sizeof(line), file)) {
		const char *sep = strstr(line, " - ");

		/* id parent major:minor root mount-point options... - fstype source superoptions */
		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mount_point) != 1 ||
		    sscanf(sep + 3, "%63s", fstype) != 1)
			continue;
		unescape_octal(mount_point);
		ret = fn(mount_point, fstype, ctx);
	}
	fclose(file);
	return ret;
}
