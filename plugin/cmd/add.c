// SPDX-License-Identifier: Apache-2.0
/*
 * ADD: parse -> record intent -> IPAM -> veth and routes -> fast paths ->
 * result. The record is written before each side effect so that a DEL or GC
 * after a crash knows what to undo; a failure undoes everything it did.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "base/error.h"
#include "base/log.h"
#include "base/naming.h"
#include "cmd/add.h"
#include "cmd/attachment.h"
#include "cni/pod_annotations.h"
#include "features/table.h"
#include "ipam/ipam.h"
#include "net/netns.h"
#include "net/wiring.h"
#include "state/routing_overhead.h"
#include "state/state.h"

/* Where an ADD's time goes, for its log line: operators see which part is slow. */
struct add_timing {
	struct timespec start, ipam_started, wired, ipam_done, end;
};

static double ms_between(const struct timespec *from, const struct timespec *to)
{
	return (double)(to->tv_sec - from->tv_sec) * 1e3 +
	       (double)(to->tv_nsec - from->tv_nsec) / 1e6;
}

static int save_record(struct velo_request *request, enum velo_phase phase)
{
	int ret;

	request->record.phase = phase;
	ret = state_record_write(&request->config.paths, &request->record);
	if (ret)
		return cni_fail(ret, VELO_ERR_STATE, "write endpoint record in %s: %s",
				request->config.paths.state_dir, strerror(-ret));
	return 0;
}

static int fill_record(struct velo_request *request)
{
	struct velo_record *record = &request->record;
	const struct cni_env *env = &request->env;
	int ret;

	snprintf(record->network, sizeof(record->network), "%s", request->config.name);
	snprintf(record->container_id, sizeof(record->container_id), "%s", env->container_id);
	snprintf(record->ifname, sizeof(record->ifname), "%s", env->ifname);
	snprintf(record->netns, sizeof(record->netns), "%s", env->netns);
	snprintf(record->pod_namespace, sizeof(record->pod_namespace), "%s",
		 env->args.pod_namespace);
	snprintf(record->pod_name, sizeof(record->pod_name), "%s", env->args.pod_name);
	snprintf(record->pod_uid, sizeof(record->pod_uid), "%s", env->args.pod_uid);
	record->created_unix = (long long)time(NULL);
	ret = netns_inode(env->netns, &record->netns_ino);
	if (ret)
		return ret;
	ret = velo_host_ifname(request->config.veth_prefix, env->container_id, env->ifname,
			       record->host_ifname);
	if (ret)
		return cni_fail(ret, CNI_ERR_INVALID_CONFIG, "vethPrefix \"%s\" is invalid",
				request->config.veth_prefix);
	record->netconf = cJSON_PrintUnformatted(request->config.root);
	if (!record->netconf)
		return cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "out of memory");
	if (env->args_raw && *env->args_raw) {
		record->cni_args = strdup(env->args_raw);
		if (!record->cni_args)
			return cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "out of memory");
	}
	return 0;
}

/* IPAM hands out a subnet's address; the pod gets it as a /32 or /128 on eth0. */
static int take_ipam_addresses(struct velo_request *request, const struct velo_result *ipam)
{
	struct velo_record *record = &request->record;

	if (ipam->n_ips == 0)
		return cni_fail(-EINVAL, VELO_ERR_IPAM, "IPAM plugin %s returned no IP address",
				request->config.ipam_type);
	for (unsigned i = 0; i < ipam->n_ips; i++) {
		struct velo_ip *ip = &record->ips[i];

		*ip = ipam->ips[i];
		ip->prefix = ip->family == AF_INET ? 32 : 128;
		ip->interface = 1;
		ip->has_gateway = true;
		inet_pton(ip->family, ip->family == AF_INET ? VELO_GATEWAY4 : VELO_GATEWAY6,
			  ip->gateway);
	}
	record->n_ips = ipam->n_ips;
	return 0;
}

static int build_result(struct velo_request *request, struct velo_result *ipam)
{
	const struct velo_record *record = &request->record;
	struct velo_result *result = &request->result;
	bool have4 = false, have6 = false;

	result->n_interfaces = 2;
	snprintf(result->interfaces[0].name, sizeof(result->interfaces[0].name), "%s",
		 record->host_ifname);
	snprintf(result->interfaces[0].mac, sizeof(result->interfaces[0].mac), "%s",
		 record->host_mac);
	snprintf(result->interfaces[1].name, sizeof(result->interfaces[1].name), "%s",
		 record->ifname);
	snprintf(result->interfaces[1].mac, sizeof(result->interfaces[1].mac), "%s",
		 record->pod_mac);
	result->interfaces[1].sandbox = strdup(record->netns);
	if (!result->interfaces[1].sandbox)
		return cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "print result: out of memory");

	result->n_ips = record->n_ips;
	memcpy(result->ips, record->ips, sizeof(record->ips[0]) * record->n_ips);
	for (unsigned i = 0; i < record->n_ips; i++) {
		have4 |= record->ips[i].family == AF_INET;
		have6 |= record->ips[i].family == AF_INET6;
	}
	result->n_routes = 0;
	if (have4) {
		struct velo_route *route = &result->routes[result->n_routes++];

		*route = (struct velo_route){ .family = AF_INET, .has_gateway = true };
		inet_pton(AF_INET, VELO_GATEWAY4, route->gateway);
	}
	if (have6) {
		struct velo_route *route = &result->routes[result->n_routes++];

		*route = (struct velo_route){ .family = AF_INET6, .has_gateway = true };
		inet_pton(AF_INET6, VELO_GATEWAY6, route->gateway);
	}
	result->dns = ipam->dns;
	ipam->dns = NULL;
	return 0;
}

static int attach_features(struct velo_request *request)
{
	for (unsigned i = 0; i < velo_features_len; i++) {
		const struct velo_feature *feature = velo_features[i];
		int ret;

		if (!feature->wanted(request))
			continue;
		/* Recorded before attaching so a crash mid-attach is undone too. */
		request->record.features |= feature->bit;
		ret = save_record(request, VELO_PHASE_FEATURES);
		if (ret)
			return ret;
		ret = feature->attach(request);
		if (ret < 0 && ret != -EAGAIN)
			return cni_fail(ret, VELO_ERR_FEATURE, "%s: %s", feature->name,
					strerror(-ret));
		if (ret) {
			/* Nothing of it is there: the record (saved with the next write) says so. */
			request->record.features &= ~feature->bit;
			if (ret == -EAGAIN)
				return cni_fail(ret, CNI_ERR_TRY_AGAIN,
						"%s: a lock is busy (> %u ms); try again later",
						feature->name, request->config.lock_timeout_ms);
			pr_info("feature %s fell back: the pod stays on the routed path",
				feature->name);
			continue;
		}
		pr_info("feature %s attached", feature->name);
	}
	return 0;
}

static int check_no_record(struct velo_request *request)
{
	struct velo_record existing = { 0 };
	int ret;

	ret = state_record_read(&request->config.paths, request->config.name,
				request->env.container_id, request->env.ifname, &existing);
	state_record_free(&existing);
	if (ret == -ENOENT)
		return 0;
	if (ret == 0)
		return cni_fail(-EEXIST, VELO_ERR_IF_EXISTS,
				"container %s already has %s on network %s (ADD without DEL)",
				request->env.container_id, request->env.ifname,
				request->config.name);
	return cni_fail(ret, VELO_ERR_STATE, "read endpoint record: %s", strerror(-ret));
}

int cmd_add(struct velo_request *request)
{
	struct velo_config *config = &request->config;
	struct velo_record *record = &request->record;
	struct velo_result ipam_result = { 0 };
	struct ipam_call call = {
		.config = config,
		.container_id = request->env.container_id,
		.netns = request->env.netns,
		.ifname = request->env.ifname,
		.args = request->env.args_raw,
		.cni_path = request->env.path,
	};
	struct wiring_spec spec = { 0 };
	struct wiring_state wired = { 0 };
	struct ipam_pending *pending;
	struct add_timing timing;
	int ret, wired_ret = -1;
	cJSON *json;

	clock_gettime(CLOCK_MONOTONIC, &timing.start);
	if (!config->ipam)
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
				"ipam: required (e.g. {\"type\": \"host-local\", ...})");
	/* Before any side effect: without its annotations a pod may not start (pod_annotations.h). */
	ret = velo_pod_annotations_load(config, &request->env.args);
	if (ret)
		return ret;

	ret = attachment_lock(request, request->env.container_id, request->env.ifname);
	if (ret)
		return ret;
	ret = check_no_record(request);
	if (ret)
		goto out_unlock;
	ret = fill_record(request);
	if (ret)
		goto out_unlock;

	spec = (struct wiring_spec){
		.netns_path = request->env.netns,
		.pod_ifname = request->env.ifname,
		.host_ifname = record->host_ifname,
		.mtu = config->mtu,
		/* velod's routing backend: room for its encapsulation when the MTU is the node's. */
		.mtu_overhead = config->mtu ? 0 : velo_routing_overhead_read(&config->paths),
		.ipv6_all_forwarding = config->ipv6_all_forwarding,
		.may_get_ipv6 = ipam_may_assign_ipv6(config->ipam_type, config->ipam),
	};
	/* Refuse before any side effect: an existing interface stays untouched. */
	ret = wiring_precheck(&spec, &wired);
	if (ret)
		goto out_unlock;
	ret = ipam_precheck(&call);
	if (ret)
		goto out_unlock;

	/*
	 * IPAM runs while velo creates the veth pair, which needs no address:
	 * the two take about as long. One record covers both side effects.
	 */
	ret = save_record(request, VELO_PHASE_WIRING);
	if (ret)
		goto out_unlock;
	ret = ipam_add_start(&call, &pending);
	if (ret)
		goto err_remove_record;
	clock_gettime(CLOCK_MONOTONIC, &timing.ipam_started);
	wired_ret = wiring_create(&spec, &wired);
	clock_gettime(CLOCK_MONOTONIC, &timing.wired);
	ret = ipam_add_finish(pending, &ipam_result);
	clock_gettime(CLOCK_MONOTONIC, &timing.ipam_done);
	if (ret == -EREMOTEIO) /* refused with an error answer: no lease */
		goto err_undo_veth;
	if (!ret)
		ret = wired_ret;
	if (ret)
		goto err_release;
	ret = take_ipam_addresses(request, &ipam_result);
	if (ret)
		goto err_release;
	record->host_ifindex = wired.host_ifindex;
	snprintf(record->host_mac, sizeof(record->host_mac), "%s", wired.host_mac);
	snprintf(record->pod_mac, sizeof(record->pod_mac), "%s", wired.pod_mac);
	spec.n_ips = record->n_ips;
	spec.ips = record->ips;
	ret = wiring_finish(&spec, &wired);
	if (ret)
		goto err_release;

	ret = attach_features(request);
	if (ret)
		goto err_release;
	ret = save_record(request, VELO_PHASE_READY);
	if (ret)
		goto err_release;

	ret = build_result(request, &ipam_result);
	if (ret)
		goto err_release;
	json = velo_result_to_json(&request->result, config->version);
	if (!json) {
		ret = cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "print result: out of memory");
		goto err_release;
	}
	{
		char *text = cJSON_PrintUnformatted(json);

		cJSON_Delete(json);
		if (!text) {
			ret = cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "print result: out of memory");
			goto err_release;
		}
		puts(text);
		cJSON_free(text);
	}
	clock_gettime(CLOCK_MONOTONIC, &timing.end);
	pr_info("added: veth %s, %u address(es) in %.2f ms: %.2f before IPAM, veth %.2f beside IPAM, "
		"IPAM %.2f, %.2f after",
		record->host_ifname, record->n_ips, ms_between(&timing.start, &timing.end),
		ms_between(&timing.start, &timing.ipam_started),
		ms_between(&timing.ipam_started, &timing.wired),
		ms_between(&timing.ipam_started, &timing.ipam_done),
		ms_between(&timing.ipam_done, &timing.end));
	wiring_close(&wired);
	velo_result_free(&ipam_result);
	attachment_unlock(request, request->env.container_id, request->env.ifname, false);
	return 0;

err_release:
	/*
	 * Undo in reverse with the record as the list of what was done. This
	 * ADD set each bit before attaching and cleared it for a feature that
	 * did nothing, so the bits are exact (the READY rule): a feature never
	 * attached isn't detached, and a busy cgroup lock can't keep the veth.
	 */
	record->phase = VELO_PHASE_READY;
	if (attachment_release(request))
		pr_err("undo of failed ADD incomplete; DEL or GC will finish it");
	goto out_unlock;
err_undo_veth:
	if (!wired_ret && attachment_remove_veth(request))
		pr_err("undo of failed ADD: veth %s not deleted; DEL or GC will",
		       record->host_ifname);
err_remove_record:
	if (state_record_remove(&config->paths, config->name, record->container_id, record->ifname))
		pr_err("undo of failed ADD: record not removed; DEL or GC will");
out_unlock:
	wiring_close(&wired);
	velo_result_free(&ipam_result);
	attachment_unlock(request, request->env.container_id, request->env.ifname, false);
	return ret;
}
