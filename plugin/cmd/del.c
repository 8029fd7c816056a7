// SPDX-License-Identifier: Apache-2.0
/*
 * DEL: idempotent and best-effort. It works with an empty CNI_NETNS, without
 * prevResult, for unknown containers, twice, and after the netns is gone, and
 * touches only what this container id owns (its own veth and record; IPAM
 * leases are keyed by container id), so a late DEL of an old sandbox can't
 * hurt a new one that got the same address. Without a readable record it
 * releases by name what an ADD of this id could have made.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "base/naming.h"
#include "cmd/attachment.h"
#include "cmd/del.h"
#include "state/state.h"

/* What an ADD of this id could have made, found by name: its veth name derives from the id. */
static void record_from_names(struct velo_request *request)
{
	const struct velo_config *config = &request->config;
	struct velo_record *record = &request->record;
	const struct cni_env *env = &request->env;

	state_record_free(record);
	memset(record, 0, sizeof(*record));
	/* Phase 0: nothing says which features were attached, so all are detached. */
	snprintf(record->network, sizeof(record->network), "%s", config->name);
	snprintf(record->container_id, sizeof(record->container_id), "%s", env->container_id);
	snprintf(record->ifname, sizeof(record->ifname), "%s", env->ifname);
	if (velo_host_ifname(config->veth_prefix, env->container_id, env->ifname,
			     record->host_ifname))
		record->host_ifname[0] = '\0';
}

int cmd_del(struct velo_request *request)
{
	struct velo_config *config = &request->config;
	struct velo_record *record = &request->record;
	const struct cni_env *env = &request->env;
	int ret;

	ret = attachment_lock(request, env->container_id, env->ifname);
	if (ret)
		return ret;

	ret = state_record_read(&config->paths, config->name, env->container_id, env->ifname,
				record);
	if (ret == -ENOENT) {
		/* No record: still release what an ADD of this id could have made. */
		pr_info("no endpoint record; releasing by name");
		record_from_names(request);
	} else if (ret) {
		/*
		 * Records aren't fsynced: a power loss can leave one empty or torn.
		 * Failing on it would fail every retry and keep the pod Terminating.
		 */
		pr_warn("endpoint record unreadable (%s); releasing by name and removing it",
			strerror(-ret));
		record_from_names(request);
	}
	/* DEL's own netns and args are what IPAM should see now. */
	snprintf(record->netns, sizeof(record->netns), "%s", env->netns ? env->netns : "");

	ret = attachment_release(request);
	attachment_unlock(request, env->container_id, env->ifname, ret == 0);
	return ret;
}
