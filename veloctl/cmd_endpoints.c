// SPDX-License-Identifier: Apache-2.0
/* veloctl endpoints: the endpoint records, reshaped for people and tools. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "datapath/pod_counters.h"
#include "state/netns_state.h"
#include "state/record_json.h"
#include "state/state.h"
#include "cmd_endpoints.h"
#include "ctl.h"

struct endpoint_scan {
	const struct ctl *ctl;
	cJSON *list;
	struct velo_counter_maps maps;
	bool maps_open;
};

/* Copies the record JSON's field key (a string or number) into out under the same name. */
static bool copy_field(cJSON *out, const cJSON *record, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(record, key);

	return item && cJSON_AddItemToObject(out, key, cJSON_Duplicate(item, false));
}

/* The pod's counters from whichever of velo's maps count it; {} when none does. */
static cJSON *counters_json(const struct velo_pod_counters *c)
{
	const struct {
		bool present;
		const char *name;
		uint64_t value;
	} fields[] = {
		{ c->has_cgroup, "rxBytes", c->rx_bytes },
		{ c->has_cgroup, "rxPackets", c->rx_packets },
		{ c->has_cgroup, "txBytes", c->tx_bytes },
		{ c->has_cgroup, "txPackets", c->tx_packets },
		{ c->has_cgroup, "egressDeniedBytes", c->deny_bytes },
		{ c->has_cgroup, "egressDeniedPackets", c->deny_packets },
		{ c->has_xdp, "xdpRedirectedBytes", c->xdp_bytes },
		{ c->has_xdp, "xdpRedirectedPackets", c->xdp_packets },
		{ c->has_sockmap, "socketRedirectTxBytes", c->sockmap_tx_bytes },
		{ c->has_sockmap, "socketRedirectRxBytes", c->sockmap_rx_bytes },
	};
	cJSON *out = cJSON_CreateObject();

	for (unsigned i = 0; out && i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].present &&
		    !cJSON_AddNumberToObject(out, fields[i].name, (double)fields[i].value)) {
			cJSON_Delete(out);
			return NULL;
		}
	return out;
}

static cJSON *endpoint_json(const struct velo_record *record, const struct endpoint_scan *scan)
{
	struct velo_pod_counters counters = {};
	static const char *const fields[] = {
		"network", "containerId", "ifname",   "podNamespace", "podName",
		"podUid",  "netns",	  "netnsIno", "hostIfname",   "hostIfindex",
		"hostMac", "podMac",	  "phase",    "created",
	};
	cJSON *full = state_record_to_json(record), *out = cJSON_CreateObject(), *ips;
	const cJSON *ip;

	if (!full || !out)
		goto err;
	for (unsigned i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!copy_field(out, full, fields[i]))
			goto err;
	ips = cJSON_AddArrayToObject(out, "ips");
	if (!ips)
		goto err;
	cJSON_ArrayForEach (ip, cJSON_GetObjectItemCaseSensitive(full, "ips")) {
		const cJSON *address = cJSON_GetObjectItemCaseSensitive(ip, "address");

		if (cJSON_IsString(address))
			cJSON_AddItemToArray(ips, cJSON_CreateString(address->valuestring));
	}
	if (!cJSON_AddNumberToObject(out, "featureBits", record->features) ||
	    !cJSON_AddItemToObject(out, "features", ctl_feature_names(record->features)) ||
	    !cJSON_AddStringToObject(out, "netnsState",
				     velo_netns_state_name(velo_netns_state(record))))
		goto err;
	if (scan->maps_open)
		velo_pod_counters_read(&scan->maps, record, &counters);
	if (!cJSON_AddItemToObject(out, "counters", counters_json(&counters)))
		goto err;
	cJSON_Delete(full);
	return out;
err:
	cJSON_Delete(full);
	cJSON_Delete(out);
	return NULL;
}

static int collect_endpoint(const struct velo_record *record, void *ctx)
{
	struct endpoint_scan *scan = ctx;
	cJSON *endpoint = endpoint_json(record, scan);

	if (!endpoint)
		return -ENOMEM;
	cJSON_AddItemToArray(scan->list, endpoint);
	return 0;
}

static int scan_network(const char *network, void *ctx)
{
	struct endpoint_scan *scan = ctx;
	int ret = state_record_foreach(&scan->ctl->paths, network, collect_endpoint, scan);

	return ret == -ENOENT ? 0 : ret;
}

cJSON *ctl_endpoints_json(const struct ctl *ctl, int *err)
{
	struct endpoint_scan scan = { .ctl = ctl, .list = cJSON_CreateArray() };

	if (!scan.list) {
		*err = -ENOMEM;
		return NULL;
	}
	scan.maps_open = !velo_counter_maps_open(&ctl->paths, &scan.maps);
	*err = ctl_foreach_network(ctl, scan_network, &scan);
	if (scan.maps_open)
		velo_counter_maps_close(&scan.maps);
	if (*err) {
		cJSON_Delete(scan.list);
		return NULL;
	}
	return scan.list;
}

static const char *string_of(const cJSON *json, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(json, key);

	return cJSON_IsString(item) && item->valuestring[0] ? item->valuestring : "-";
}

/* Joins the strings of array with sep into buf ("-" when empty). */
static const char *join(const cJSON *array, const char *sep, char *buf, size_t len)
{
	const cJSON *item;
	size_t used = 0;

	buf[0] = '\0';
	cJSON_ArrayForEach (item, array) {
		if (!cJSON_IsString(item))
			continue;
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
					 used ? sep : "", item->valuestring);
	}
	return buf[0] ? buf : "-";
}

static void print_text(const cJSON *list)
{
	const cJSON *endpoint;
	char pod[512], ips[256], features[128];

	printf("%-32s %-12s %-6s %-15s %-32s %-10s %-8s %s\n", "POD", "CONTAINER", "IFNAME",
	       "HOST-VETH", "IPS", "FEATURES", "PHASE", "NETNS");
	cJSON_ArrayForEach (endpoint, list) {
		snprintf(pod, sizeof(pod), "%s/%s", string_of(endpoint, "podNamespace"),
			 string_of(endpoint, "podName"));
		printf("%-32s %-12.12s %-6s %-15s %-32s %-10s %-8s %s\n", pod,
		       string_of(endpoint, "containerId"), string_of(endpoint, "ifname"),
		       string_of(endpoint, "hostIfname"),
		       join(cJSON_GetObjectItemCaseSensitive(endpoint, "ips"), ",", ips,
			    sizeof(ips)),
		       join(cJSON_GetObjectItemCaseSensitive(endpoint, "features"), ",", features,
			    sizeof(features)),
		       string_of(endpoint, "phase"), string_of(endpoint, "netnsState"));
	}
}

int cmd_ctl_endpoints(struct ctl *ctl)
{
	cJSON *list;
	int err;

	list = ctl_endpoints_json(ctl, &err);
	if (!list) {
		ctl_error(ctl, "read endpoint records under %s: %s", ctl->paths.state_dir,
			  strerror(-err));
		return CTL_EXIT_FAILED;
	}
	if (ctl->json)
		return ctl_print_json(ctl, list) ? CTL_EXIT_FAILED : CTL_EXIT_OK;
	print_text(list);
	cJSON_Delete(list);
	return CTL_EXIT_OK;
}
