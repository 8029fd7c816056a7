// SPDX-License-Identifier: Apache-2.0
/* Is an endpoint's pod netns still there: its path, and the inode recorded at ADD. */
#include <errno.h>
#include <sys/stat.h>

#include "state/netns_state.h"

enum velo_netns_state velo_netns_state(const struct velo_record *record)
{
	struct stat st;

	if (!record->netns[0])
		return VELO_NETNS_UNKNOWN;
	if (stat(record->netns, &st)) {
		/* Only "not there" means gone; EACCES and friends say nothing. */
		return errno == ENOENT || errno == ENOTDIR ? VELO_NETNS_GONE : VELO_NETNS_UNKNOWN;
	}
	/* A path reused for a new namespace (or a leftover mount point file) is not the pod's. */
	if (record->netns_ino && (uint64_t)st.st_ino != record->netns_ino)
		return VELO_NETNS_GONE;
	return VELO_NETNS_ALIVE;
}

const char *velo_netns_state_name(enum velo_netns_state state)
{
	switch (state) {
	case VELO_NETNS_ALIVE:
		return "alive";
	case VELO_NETNS_GONE:
		return "gone";
	default:
		return "unknown";
	}
}
