// SPDX-License-Identifier: Apache-2.0
/* The routing backend's overhead file in state_dir (routing_overhead.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/routing_overhead.h"
#include "state/state_file.h"

unsigned velo_routing_overhead_read(const struct velo_paths *paths)
{
	char text[16], *end;
	unsigned long overhead;

	if (state_file_read(paths, VELO_ROUTING_OVERHEAD_FILE, text, sizeof(text)) <= 0 ||
	    text[0] < '0' || text[0] > '9')
		return 0;
	errno = 0;
	overhead = strtoul(text, &end, 10);
	if (errno || strcmp(end, "\n") || overhead > VELO_ROUTING_OVERHEAD_MAX)
		return 0;
	return (unsigned)overhead;
}

int velo_routing_overhead_write(const struct velo_paths *paths, unsigned overhead)
{
	char text[16];

	if (!overhead)
		return state_file_remove(paths, VELO_ROUTING_OVERHEAD_FILE);
	if (overhead > VELO_ROUTING_OVERHEAD_MAX)
		return -ERANGE;
	snprintf(text, sizeof(text), "%u\n", overhead);
	return state_file_write(paths, VELO_ROUTING_OVERHEAD_FILE, text);
}
