// SPDX-License-Identifier: Apache-2.0
/* velo's in-process IPAM behind the IPAM facade (ipam.h): config, result, GC's keep rule. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/lock.h"
#include "base/log.h"
#include "ipam/allocator.h"
#include "ipam/velo.h"
#include "state/state.h"

bool ipam_is_velo(const struct velo_config *config)
{
	return config->ipam && strcmp(config->ipam_type, IPAM_VELO_TYPE) == 0;
}

static int load(const struct ipam_call *call, struct ipam_conf *conf)
{
	return ipam_conf_parse(call->config->ipam, call->config->paths.state_dir, conf);
}

static void fill_result(const struct ipam_conf *conf, const struct ipam_lease *leases,
			struct velo_result *result)
{
	memset(result, 0, sizeof(*result));
	for (unsigned s = 0; s < conf->n_sets; s++) {
		struct velo_ip *ip = &result->ips[result->n_ips++];

		ip->family = leases[s].family;
		memcpy(ip->addr, leases[s].addr, sizeof(ip->addr));
		ip->prefix = leases[s].range->prefix;
		ip->has_gateway = true;
		memcpy(ip->gateway, leases[s].range->gateway, sizeof(ip->gateway));
		ip->interface = -1;
	}
	for (unsigned i = 0; i < conf->n_routes && i < VELO_MAX_ROUTES; i++) {
		struct velo_route *route = &result->routes[result->n_routes++];

		route->family = conf->routes[i].family;
		memcpy(route->dst, conf->routes[i].dst, sizeof(route->dst));
		route->prefix = conf->routes[i].prefix;
		route->has_gateway = conf->routes[i].has_gateway;
		memcpy(route->gateway, conf->routes[i].gateway, sizeof(route->gateway));
	}
}

int ipam_velo_add(const struct ipam_call *call, struct velo_result *result)
{
	struct ipam_owner owner = { call->config->name, call->container_id, call->ifname };
	struct ipam_lease leases[IPAM_MAX_SETS];
	struct ipam_conf conf;
	int ret;

	ret = load(call, &conf);
	if (!ret)
		ret = ipam_allocate(&conf, &owner, leases);
	if (ret)
		return -EREMOTEIO; /* recorded, and all or nothing: no lease is held */
	fill_result(&conf, leases, result);
	pr_debug("IPAM velo: ADD gave %u address(es)", result->n_ips);
	return 0;
}

int ipam_velo_del(const struct ipam_call *call)
{
	struct ipam_owner owner = { call->config->name, call->container_id, call->ifname };
	struct ipam_conf conf;
	int ret;

	ret = load(call, &conf);
	return ret ? ret : ipam_release(&conf, &owner, call->ips, call->n_ips);
}

int ipam_velo_check(const struct ipam_call *call)
{
	struct ipam_owner owner = { call->config->name, call->container_id, call->ifname };
	struct ipam_conf conf;
	int ret;

	ret = load(call, &conf);
	return ret ? ret : ipam_verify(&conf, &owner, call->ips, call->n_ips);
}

int ipam_velo_status(const struct ipam_call *call)
{
	struct ipam_conf conf;
	int ret;

	ret = load(call, &conf);
	if (ret)
		return ret;
	ret = lock_mkdirs(conf.data_dir);
	if (ret)
		return cni_fail(ret, CNI_ERR_NOT_AVAILABLE, "ipam.dataDir %s: %s", conf.data_dir,
				strerror(-ret));
	return 0;
}

static bool in_valid(const cJSON *valid, const char *container_id, const char *ifname)
{
	const cJSON *item;

	cJSON_ArrayForEach (item, valid) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(item, "containerID");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "ifname");

		if (cJSON_IsString(id) && cJSON_IsString(name) &&
		    !strcmp(id->valuestring, container_id) && !strcmp(name->valuestring, ifname))
			return true;
	}
	return false;
}

/*
 * A lease stays while its attachment is valid or still has an endpoint record:
 * an ADD in flight writes its record before it leases, and a record GC could
 * not release (busy, failed) keeps its lease for the next GC or DEL.
 */
static bool keep(const char *container_id, const char *ifname, void *ctx)
{
	const struct velo_config *config = ctx;
	struct velo_record record = { 0 };
	int ret;

	if (in_valid(config->valid_attachments, container_id, ifname))
		return true;
	ret = state_record_read(&config->paths, config->name, container_id, ifname, &record);
	state_record_free(&record);
	return ret != -ENOENT;
}

int ipam_velo_gc(const struct ipam_call *call)
{
	struct ipam_conf conf;
	unsigned n = 0;
	int ret;

	ret = load(call, &conf);
	if (ret)
		return ret;
	ret = ipam_sweep(&conf, call->config->name, keep, (void *)call->config, &n);
	if (n)
		pr_info("gc: released %u IPAM lease(s) of attachments that are gone", n);
	return ret;
}
