// SPDX-License-Identifier: Apache-2.0
/*
 * CHECK: read-only. Asks IPAM, then compares the pod and host side with what
 * ADD made (prevResult and the endpoint record) and every feature the pod
 * asked for. Each drift is one item in the error's details.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "cmd/attachment.h"
#include "cmd/check.h"
#include "features/table.h"
#include "ipam/ipam.h"
#include "net/wiring.h"
#include "net/wiring_check.h"
#include "state/state.h"

/* The pod's MAC as the runtime was told it: prevResult's sandbox interface. */
static const char *prev_pod_mac(const struct velo_result *prev, const char *ifname)
{
	for (unsigned i = 0; i < prev->n_interfaces; i++)
		if (prev->interfaces[i].sandbox && !strcmp(prev->interfaces[i].name, ifname))
			return prev->interfaces[i].mac;
	return NULL;
}

static void compare_prev_result(const struct velo_result *prev, const struct velo_record *record)
{
	for (unsigned i = 0; i < record->n_ips; i++) {
		bool found = false;
		char text[64];

		for (unsigned j = 0; j < prev->n_ips; j++)
			found |= prev->ips[j].family == record->ips[i].family &&
				 !memcmp(prev->ips[j].addr, record->ips[i].addr, 16);
		if (!found)
			cni_error_detail("prevResult: address %s missing",
					 velo_addr_fmt(record->ips[i].family, record->ips[i].addr,
						       -1, text, sizeof(text)));
	}
}

static int check_features(struct velo_request *request)
{
	int drift = 0;

	for (unsigned i = 0; i < velo_features_len; i++) {
		const struct velo_feature *feature = velo_features[i];

		if (feature->agent_managed) {
			/* Its state is velod's to change: only what it can never be is drift. */
			if (request->record.phase == VELO_PHASE_READY && feature->check(request))
				drift = -EIO;
			continue;
		}
		if (!feature->wanted(request) && !(request->record.features & feature->bit))
			continue;
		if (!(request->record.features & feature->bit)) {
			/* ADD fell back: judge the routed state it left, not the feature's pins. */
			if (request->record.phase == VELO_PHASE_READY && feature->check_routed) {
				if (feature->check_routed(request))
					drift = -EIO;
				continue;
			}
			cni_error_detail("%s: requested but not attached", feature->name);
			drift = -EIO;
			continue;
		}
		if (feature->check(request))
			drift = -EIO;
	}
	return drift;
}

int cmd_check(struct velo_request *request)
{
	struct velo_config *config = &request->config;
	struct velo_record *record = &request->record;
	const struct cni_env *env = &request->env;
	struct velo_result prev = { 0 };
	struct ipam_call call = {
		.config = config,
		.container_id = env->container_id,
		.netns = env->netns,
		.ifname = env->ifname,
		.args = env->args_raw,
		.cni_path = env->path,
	};
	struct wiring_spec spec;
	struct wiring_state expected = { 0 };
	const char *mac;
	int ret, drift = 0;

	if (config->version < CNI_V_0_4_0)
		return cni_fail(-EINVAL, CNI_ERR_INCOMPATIBLE_VERSION,
				"CHECK needs cniVersion 0.4.0 or newer, config has %s",
				config->version_str);
	if (!config->prev_result)
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "prevResult: required for CHECK");
	ret = velo_result_parse(config->prev_result, &prev);
	if (ret)
		return cni_fail(ret, CNI_ERR_INVALID_CONFIG, "prevResult: invalid");

	ret = attachment_lock(request, env->container_id, env->ifname);
	if (ret)
		goto out_free;
	ret = state_record_read(&config->paths, config->name, env->container_id, env->ifname,
				record);
	if (ret == -ENOENT) {
		ret = cni_fail(ret, CNI_ERR_UNKNOWN_CONTAINER, "no attachment %s/%s on network %s",
			       env->container_id, env->ifname, config->name);
		goto out_unlock;
	}
	if (ret) {
		ret = cni_fail(ret, VELO_ERR_STATE, "read endpoint record: %s", strerror(-ret));
		goto out_unlock;
	}

	if (config->ipam) {
		call.ips = record->ips;
		call.n_ips = record->n_ips;
		ret = ipam_check(&call);
		if (ret)
			goto out_unlock;
	}

	if (record->phase != VELO_PHASE_READY) {
		cni_error_detail("endpoint: ADD did not finish (phase %d)", record->phase);
		drift = -EIO;
	}
	compare_prev_result(&prev, record);
	spec = (struct wiring_spec){
		.netns_path = env->netns,
		.pod_ifname = env->ifname,
		.host_ifname = record->host_ifname,
		.mtu = config->mtu,
		.n_ips = record->n_ips,
		.ips = record->ips,
		.ipv6_all_forwarding = config->ipv6_all_forwarding,
	};
	expected.host_ifindex = record->host_ifindex;
	mac = prev_pod_mac(&prev, env->ifname);
	snprintf(expected.pod_mac, sizeof(expected.pod_mac), "%s", mac ? mac : record->pod_mac);
	snprintf(expected.host_mac, sizeof(expected.host_mac), "%s", record->host_mac);
	if (wiring_check(&spec, &expected))
		drift = -EIO;
	if (check_features(request))
		drift = -EIO;

	if (drift)
		ret = cni_fail(drift, VELO_ERR_CHECK, "CHECK found drift on %s/%s",
			       env->container_id, env->ifname);
out_unlock:
	attachment_unlock(request, env->container_id, env->ifname, false);
out_free:
	velo_result_free(&prev);
	return ret;
}
