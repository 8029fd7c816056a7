// SPDX-License-Identifier: Apache-2.0
/* What DEL, GC and a failed ADD share: the attachment lock and undoing an attachment. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/lock.h"
#include "base/log.h"
#include "cmd/attachment.h"
#include "features/table.h"
#include "ipam/ipam.h"
#include "net/retire.h"
#include "state/state.h"

int attachment_lock(struct velo_request *request, const char *container_id, const char *ifname)
{
	const struct velo_config *config = &request->config;
	char path[4096];
	int ret, fd;

	ret = state_lock_path(&config->paths, config->name, container_id, ifname, path,
			      sizeof(path));
	if (ret)
		return cni_fail(ret, VELO_ERR_STATE, "lock path for %s/%s: %s", container_id,
				ifname, strerror(-ret));
	fd = lock_acquire(path, config->lock_timeout_ms);
	if (fd == -EAGAIN)
		return cni_fail(fd, CNI_ERR_TRY_AGAIN,
				"attachment %s/%s is busy (lock held > %u ms); try again later",
				container_id, ifname, config->lock_timeout_ms);
	if (fd < 0)
		return cni_fail(fd, VELO_ERR_STATE, "lock %s: %s", path, strerror(-fd));
	request->lock_fd = fd;
	return 0;
}

void attachment_unlock(struct velo_request *request, const char *container_id, const char *ifname,
		       bool remove)
{
	const struct velo_config *config = &request->config;
	char path[4096];

	if (request->lock_fd < 0)
		return;
	if (remove && !state_lock_path(&config->paths, config->name, container_id, ifname, path,
				       sizeof(path)))
		lock_release_unlink(request->lock_fd, path);
	else
		lock_release(request->lock_fd);
	request->lock_fd = -1;
}

/* Detaches all it can; returns the first error and names its feature in *failed. */
static int release_features(struct velo_request *request, const char **failed)
{
	const struct velo_record *record = &request->record;
	int first_err = 0;

	for (unsigned i = velo_features_len; i-- > 0;) {
		const struct velo_feature *feature = velo_features[i];
		int ret;

		/* Without a finished record we can't know what was attached: undo all. */
		if (record->phase == VELO_PHASE_READY && !(record->features & feature->bit) &&
		    !feature->agent_managed)
			continue;
		ret = feature->detach(request);
		if (ret) {
			pr_warn("detach %s: %s", feature->name, strerror(-ret));
			if (!first_err) {
				first_err = ret;
				*failed = feature->name;
			}
		}
	}
	return first_err;
}

int attachment_remove_veth(struct velo_request *request)
{
	const char *host_ifname = request->record.host_ifname;
	int ret;

	if (!host_ifname[0])
		return 0;
	/* Retired, not deleted: deleting would wait ~20 ms of RCU grace periods (net/retire.h). */
	ret = velo_veth_retire(host_ifname);
	if (ret > 0 && !request->reaper_pid && !velo_agent_running(&request->config.paths))
		request->reaper_pid = velo_retired_reap_start();
	return ret < 0 ? ret : 0;
}

int attachment_release_ipam(struct velo_request *request, const struct velo_config *ipam_config)
{
	struct velo_record *record = &request->record;
	const struct velo_config *config = &request->config;
	struct ipam_call call = {
		.config = ipam_config ? ipam_config : config,
		.container_id = record->container_id,
		.netns = record->netns,
		.ifname = record->ifname,
		.args = record->cni_args,
		.cni_path = request->env.path,
		.ips = record->ips,
		.n_ips = record->n_ips,
		.netconf = record->netconf,
	};
	const char *failed = "";
	int ret, features_ret;

	/*
	 * A feature that can't detach now (a busy cgroup lock) must not keep the
	 * pod's veth and lease: the rest goes regardless, and the record stays so
	 * a retry (DEL, GC, velod) detaches what is left.
	 */
	features_ret = release_features(request, &failed);
	if (features_ret)
		cni_fail(features_ret,
			 features_ret == -EAGAIN ? CNI_ERR_TRY_AGAIN : VELO_ERR_FEATURE,
			 "detach %s of %s/%s: %s; the record stays for a retry", failed,
			 record->container_id, record->ifname,
			 features_ret == -EAGAIN ? "its lock is busy, try again later"
						 : strerror(-features_ret));

	/*
	 * The veth goes (or, with velod running, goes down and so loses its routes)
	 * before the lease: a lease released while the old route still exists could
	 * be handed to a new pod whose route then collides.
	 */
	ret = attachment_remove_veth(request);
	if (ret)
		return ret;

	if (call.config->ipam) {
		ret = ipam_del(&call);
		if (ret)
			return ret;
	}
	if (features_ret)
		return features_ret;

	ret = state_record_remove(&config->paths, config->name, record->container_id,
				  record->ifname);
	if (ret)
		return cni_fail(ret, VELO_ERR_STATE, "remove record of %s/%s: %s",
				record->container_id, record->ifname, strerror(-ret));
	pr_info("released %s/%s (veth %s)", record->container_id, record->ifname,
		record->host_ifname);
	return 0;
}

int attachment_release(struct velo_request *request)
{
	return attachment_release_ipam(request, NULL);
}
