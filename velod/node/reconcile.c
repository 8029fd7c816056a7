// SPDX-License-Identifier: Apache-2.0
/*
 * Reconciliation: containerd never calls CNI GC, so an endpoint whose pod
 * vanished without a DEL would keep its veth, its record and its IPAM lease
 * forever. velod releases such endpoints exactly as DEL would
 * (attachment_release, under the attachment lock), and nothing else:
 *   - only when the netns path recorded at ADD is gone, or now names a
 *     namespace with another inode than the one recorded; a record without
 *     a netns path, or one whose netns can't be checked, stays;
 *   - never while the record is younger than the grace period;
 *   - never while someone holds the attachment lock (an ADD or DEL in flight);
 *   - after taking the lock, the record is read and checked again, so an ADD
 *     that replaced it meanwhile is seen.
 * Absence from the Kubernetes API alone is never a reason.
 * Each pass also moves pods still on an older BPF generation (upgrade/pass.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/lock.h"
#include "base/log.h"
#include "cmd/attachment.h"
#include "net/retire.h"
#include "state/netns_state.h"
#include "state/state.h"
#include "upgrade/pass.h"
#include "reconcile.h"

/* Loading this generation's programs waits at most this long for another loader. */
#define UPGRADE_LOCK_TIMEOUT_MS 5000

struct candidate {
	char container_id[256];
	char ifname[16];
};

struct scan {
	const struct agent_config *config;
	long long now;
	struct candidate *stale;
	unsigned n, cap;
};

static bool is_stale(const struct velo_record *record, long long now, unsigned grace_s)
{
	if (now - record->created_unix < (long long)grace_s)
		return false;
	return velo_netns_state(record) == VELO_NETNS_GONE;
}

static int collect(const struct velo_record *record, void *ctx)
{
	struct scan *scan = ctx;
	struct candidate *grown;

	if (!is_stale(record, scan->now, scan->config->grace_period_s))
		return 0;
	if (scan->n == scan->cap) {
		unsigned cap = scan->cap ? scan->cap * 2 : 16;

		grown = realloc(scan->stale, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		scan->stale = grown;
		scan->cap = cap;
	}
	memcpy(scan->stale[scan->n].container_id, record->container_id,
	       sizeof(record->container_id));
	memcpy(scan->stale[scan->n].ifname, record->ifname, sizeof(record->ifname));
	scan->n++;
	return 0;
}

/* The request DEL would have had, rebuilt from the record and the config ADD received. */
static int build_request(const struct agent_config *config, const char *network,
			 struct velo_request *request)
{
	struct velo_record *record = &request->record;
	int ret;

	if (!record->netconf || !record->netconf[0]) {
		pr_warn("record has no network config: can't release its IPAM lease; kept");
		return -ENODATA;
	}
	ret = velo_config_parse(record->netconf, &request->config);
	if (ret) {
		pr_warn("record's network config no longer parses (%s); kept",
			cni_error_is_set() ? cni_error_get()->msg : strerror(-ret));
		return ret;
	}
	if (strcmp(request->config.name, network)) {
		pr_warn("record's config names network %s, found under %s; kept",
			request->config.name, network);
		return -EINVAL;
	}
	/* Where velod found the record and took the lock is where DEL would look. */
	memcpy(request->config.paths.state_dir, config->paths.state_dir,
	       sizeof(config->paths.state_dir));
	memcpy(request->config.paths.run_dir, config->paths.run_dir, sizeof(config->paths.run_dir));
	request->env.command = CNI_CMD_DEL;
	request->env.command_str = "DEL";
	request->env.container_id = record->container_id;
	request->env.ifname = record->ifname;
	request->env.netns = "";
	request->env.args_raw = record->cni_args;
	request->env.path = config->cni_path;
	snprintf(request->env.args.pod_namespace, sizeof(request->env.args.pod_namespace), "%s",
		 record->pod_namespace);
	snprintf(request->env.args.pod_name, sizeof(request->env.args.pod_name), "%s",
		 record->pod_name);
	snprintf(request->env.args.pod_uid, sizeof(request->env.args.pod_uid), "%s",
		 record->pod_uid);
	/* The pod is gone: IPAM must not need its netns (as GC does). */
	record->netns[0] = '\0';
	return 0;
}

/* 1 released, 0 left alone, -errno failed. */
static int release_one(struct agent *agent, const char *network, const struct candidate *stale)
{
	const struct agent_config *config = &agent->config;
	struct velo_request request = { .lock_fd = -1 };
	bool parsed = false;
	char path[4096];
	int ret, fd;

	ret = state_lock_path(&config->paths, network, stale->container_id, stale->ifname, path,
			      sizeof(path));
	if (ret)
		return ret;
	fd = lock_try(path);
	if (fd == -EWOULDBLOCK || fd == -EAGAIN) {
		agent->reconcile.busy++;
		pr_info("reconcile: %s/%s busy (ADD or DEL in flight), skipped",
			stale->container_id, stale->ifname);
		return 0;
	}
	if (fd < 0)
		return fd;
	request.lock_fd = fd;
	log_set_request("RECONCILE", stale->container_id, stale->ifname);

	ret = state_record_read(&config->paths, network, stale->container_id, stale->ifname,
				&request.record);
	if (ret == -ENOENT) { /* a DEL got there first */
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;
	log_set_pod(request.record.pod_namespace, request.record.pod_name);
	/* Checked again under the lock: an ADD may have replaced the record meanwhile. */
	if (!is_stale(&request.record, (long long)agent_now_unix(), config->grace_period_s)) {
		ret = 0;
		goto out;
	}
	cni_error_reset();
	ret = build_request(config, network, &request);
	parsed = ret != -ENODATA;
	if (ret)
		goto out;
	ret = attachment_release(&request);
	/* No reaper of its own (reapIntervalMs 0): the release forked one; velod reaps its child. */
	velo_retired_reap_wait(request.reaper_pid);
	if (ret) {
		pr_warn("reconcile: release failed: %s",
			cni_error_is_set() ? cni_error_get()->msg : strerror(-ret));
		goto out;
	}
	pr_info("reconcile: released (netns gone without DEL)");
	ret = 1;
out:
	state_record_free(&request.record);
	if (parsed && request.config.name[0])
		attachment_unlock(&request, stale->container_id, stale->ifname, ret == 1);
	else
		lock_release(request.lock_fd);
	if (parsed)
		velo_config_free(&request.config);
	log_set_request("RECONCILE", NULL, NULL);
	log_set_pod(NULL, NULL);
	return ret;
}

static int reconcile_network(const char *network, void *ctx)
{
	struct agent *agent = ctx;
	struct scan scan = { .config = &agent->config, .now = (long long)agent_now_unix() };
	int ret;

	ret = state_record_foreach(&agent->config.paths, network, collect, &scan);
	if (ret && ret != -ENOENT) {
		free(scan.stale);
		pr_warn("reconcile: scan records of %s: %s", network, strerror(-ret));
		return ret;
	}
	for (unsigned i = 0; i < scan.n; i++) {
		ret = release_one(agent, network, &scan.stale[i]);
		if (ret == 1)
			agent->reconcile.released++;
		else if (ret < 0)
			agent->reconcile.errors++;
	}
	free(scan.stale);
	return 0;
}

/* After an upgrade: pods still on an older generation's programs move to this one's. */
static void upgrade_run(const struct agent *agent)
{
	static int last_error;
	struct velo_upgrade upgrade;
	int ret;

	ret = velo_bpf_upgrade(&agent->config.paths, UPGRADE_LOCK_TIMEOUT_MS, &upgrade);
	if (ret && ret != last_error)
		pr_warn("upgrade: pods on older BPF programs can't be moved: %s", strerror(-ret));
	last_error = ret;
	if (upgrade.busy || upgrade.failed)
		pr_info("upgrade: %u endpoint(s) moved, %u busy and %u failed: the old programs "
			"stay until the next pass",
			upgrade.moved, upgrade.busy, upgrade.failed);
}

void reconcile_run(struct agent *agent)
{
	int ret;

	log_set_request("RECONCILE", NULL, NULL);
	ret = agent_foreach_network(&agent->config, reconcile_network, agent);
	agent->reconcile.runs++;
	agent->reconcile.last_scan_error = ret;
	if (!ret)
		agent->reconcile.last_success_unix = agent_now_unix();
	else
		agent->reconcile.errors++;
	upgrade_run(agent);
	log_set_request(NULL, NULL, NULL);
}
