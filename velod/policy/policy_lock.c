// SPDX-License-Identifier: Apache-2.0
/* A pod's attachment lock for velod's policy passes (policy_lock.h). */
#include <limits.h>

#include "base/lock.h"
#include "state/state.h"
#include "policy_lock.h"

int policy_lock_try(const struct agent_config *config, const struct velo_record *record,
		    unsigned *busy)
{
	char path[PATH_MAX];
	int ret, fd;

	ret = state_lock_path(&config->paths, record->network, record->container_id, record->ifname,
			      path, sizeof(path));
	if (ret)
		return ret;
	fd = lock_try(path);
	if (fd < 0)
		(*busy)++;
	return fd;
}
