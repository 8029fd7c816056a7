// SPDX-License-Identifier: Apache-2.0
/*
 * An endpoint record as JSON and back. Reading checks every field's type and
 * bound: anything else is -EINVAL, never a crash or a half-filled record.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cJSON.h>

#include "state/record_json.h"

#define STATE_FORMAT_VERSION 1

static const char *const phase_names[] = {
	[VELO_PHASE_IPAM] = "ipam",
	[VELO_PHASE_WIRING] = "wiring",
	[VELO_PHASE_FEATURES] = "features",
	[VELO_PHASE_READY] = "ready",
};

static bool add_string(cJSON *json, const char *key, const char *value)
{
	return cJSON_AddStringToObject(json, key, value) != NULL;
}

/*
 * Integers as their exact digits. cJSON 1.7.15 prints any number with
 * sprintf("%1.15g") and reads it back with sscanf to check it: ~2,000
 * instructions a number, 4% of an ADD's for its two records.
 */
static bool add_integer(cJSON *json, const char *key, long long value)
{
	char digits[24];

	snprintf(digits, sizeof(digits), "%lld", value);
	return cJSON_AddRawToObject(json, key, digits) != NULL;
}

static cJSON *ip_to_json(const struct velo_ip *ip)
{
	cJSON *json = cJSON_CreateObject();
	char text[64];

	if (!json)
		return NULL;
	if (!velo_addr_fmt(ip->family, ip->addr, ip->prefix, text, sizeof(text)) ||
	    !add_string(json, "address", text))
		goto err;
	if (ip->has_gateway && (!velo_addr_fmt(ip->family, ip->gateway, -1, text, sizeof(text)) ||
				!add_string(json, "gateway", text)))
		goto err;
	if (ip->interface >= 0 && !add_integer(json, "interface", ip->interface))
		goto err;
	return json;
err:
	cJSON_Delete(json);
	return NULL;
}

cJSON *state_record_to_json(const struct velo_record *record)
{
	cJSON *json = cJSON_CreateObject(), *ips, *ip;
	unsigned phase = record->phase;

	if (!json)
		goto err_nomem;
	if (phase >= sizeof(phase_names) / sizeof(phase_names[0]) || !phase_names[phase] ||
	    record->n_ips > VELO_MAX_IPS) {
		cJSON_Delete(json);
		errno = EINVAL;
		return NULL;
	}
	if (!add_integer(json, "version", STATE_FORMAT_VERSION) ||
	    !add_string(json, "network", record->network) ||
	    !add_string(json, "containerId", record->container_id) ||
	    !add_string(json, "ifname", record->ifname) ||
	    !add_string(json, "netns", record->netns) ||
	    !add_integer(json, "netnsIno", (long long)record->netns_ino) ||
	    !add_string(json, "hostIfname", record->host_ifname) ||
	    !add_integer(json, "hostIfindex", record->host_ifindex) ||
	    !add_string(json, "hostMac", record->host_mac) ||
	    !add_string(json, "podMac", record->pod_mac) ||
	    !add_string(json, "podNamespace", record->pod_namespace) ||
	    !add_string(json, "podName", record->pod_name) ||
	    !add_string(json, "podUid", record->pod_uid) ||
	    !add_integer(json, "created", record->created_unix) ||
	    !add_string(json, "phase", phase_names[phase]) ||
	    !add_integer(json, "features", record->features) ||
	    (record->cgroup_id && !add_integer(json, "cgroupId", (long long)record->cgroup_id)) ||
	    !add_string(json, "netconf", record->netconf ? record->netconf : "") ||
	    (record->cni_args && !add_string(json, "cniArgs", record->cni_args)))
		goto err_nomem;
	ips = cJSON_AddArrayToObject(json, "ips");
	if (!ips)
		goto err_nomem;
	for (unsigned i = 0; i < record->n_ips; i++) {
		ip = ip_to_json(&record->ips[i]);
		if (!ip || !cJSON_AddItemToArray(ips, ip)) {
			cJSON_Delete(ip);
			cJSON_Delete(json);
			errno = EINVAL; /* an address velo_addr_fmt can't print */
			return NULL;
		}
	}
	return json;
err_nomem:
	cJSON_Delete(json);
	errno = ENOMEM;
	return NULL;
}

/* Copies the string field key into buf; -EINVAL if it is missing, not a string or too long. */
static int get_string(const cJSON *json, const char *key, char *buf, size_t len, bool required)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(json, key);

	if (!item) {
		buf[0] = '\0';
		return required ? -EINVAL : 0;
	}
	if (!cJSON_IsString(item) || strlen(item->valuestring) >= len)
		return -EINVAL;
	memcpy(buf, item->valuestring, strlen(item->valuestring) + 1);
	return 0;
}

/* An integral number in [min, max]; missing is 0 unless required. */
static int get_integer(const cJSON *json, const char *key, double min, double max, long long *out,
		       bool required)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(json, key);
	double value;

	*out = 0;
	if (!item)
		return required ? -EINVAL : 0;
	if (!cJSON_IsNumber(item))
		return -EINVAL;
	value = item->valuedouble;
	if (value < min || value > max || value != (double)(long long)value)
		return -EINVAL;
	*out = (long long)value;
	return 0;
}

static int dup_string(const cJSON *json, const char *key, char **out, bool required)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(json, key);

	*out = NULL;
	if (!item)
		return required ? -EINVAL : 0;
	if (!cJSON_IsString(item))
		return -EINVAL;
	*out = strdup(item->valuestring);
	return *out ? 0 : -ENOMEM;
}

static int ip_from_json(const cJSON *json, struct velo_ip *ip)
{
	const cJSON *address = cJSON_GetObjectItemCaseSensitive(json, "address");
	const cJSON *gateway = cJSON_GetObjectItemCaseSensitive(json, "gateway");
	long long interface;
	int family;

	if (!cJSON_IsObject(json) || !cJSON_IsString(address) ||
	    velo_prefix_parse(address->valuestring, &ip->family, ip->addr, &ip->prefix))
		return -EINVAL;
	if (gateway) {
		if (!cJSON_IsString(gateway) ||
		    velo_addr_parse(gateway->valuestring, &family, ip->gateway) ||
		    family != ip->family)
			return -EINVAL;
		ip->has_gateway = true;
	}
	if (get_integer(json, "interface", 0, VELO_MAX_IFACES - 1, &interface, false))
		return -EINVAL;
	ip->interface = cJSON_GetObjectItemCaseSensitive(json, "interface") ? (int)interface : -1;
	return 0;
}

static int phase_from_json(const cJSON *json, enum velo_phase *phase)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(json, "phase");

	if (!cJSON_IsString(item))
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(phase_names) / sizeof(phase_names[0]); i++) {
		if (phase_names[i] && !strcmp(phase_names[i], item->valuestring)) {
			*phase = (enum velo_phase)i;
			return 0;
		}
	}
	return -EINVAL;
}

static int record_from_json(const cJSON *json, struct velo_record *out)
{
	const cJSON *ips, *ip;
	long long number;

	if (!cJSON_IsObject(json))
		return -EINVAL;
	if (get_integer(json, "version", STATE_FORMAT_VERSION, STATE_FORMAT_VERSION, &number,
			true) ||
	    get_string(json, "network", out->network, sizeof(out->network), true) ||
	    get_string(json, "containerId", out->container_id, sizeof(out->container_id), true) ||
	    get_string(json, "ifname", out->ifname, sizeof(out->ifname), true) ||
	    get_string(json, "netns", out->netns, sizeof(out->netns), false) ||
	    get_string(json, "hostIfname", out->host_ifname, sizeof(out->host_ifname), false) ||
	    get_string(json, "hostMac", out->host_mac, sizeof(out->host_mac), false) ||
	    get_string(json, "podMac", out->pod_mac, sizeof(out->pod_mac), false) ||
	    get_string(json, "podNamespace", out->pod_namespace, sizeof(out->pod_namespace),
		       false) ||
	    get_string(json, "podName", out->pod_name, sizeof(out->pod_name), false) ||
	    get_string(json, "podUid", out->pod_uid, sizeof(out->pod_uid), false) ||
	    phase_from_json(json, &out->phase))
		return -EINVAL;
	/* 2^53: the largest integer a JSON number carries exactly. */
	if (get_integer(json, "netnsIno", 0, 9007199254740992.0, &number, false))
		return -EINVAL;
	out->netns_ino = (uint64_t)number;
	if (get_integer(json, "hostIfindex", 0, 2147483647.0, &number, false))
		return -EINVAL;
	out->host_ifindex = (int)number;
	if (get_integer(json, "created", 0, 9007199254740992.0, &number, false))
		return -EINVAL;
	out->created_unix = number;
	if (get_integer(json, "features", 0, 4294967295.0, &number, false))
		return -EINVAL;
	out->features = (unsigned)number;
	if (get_integer(json, "cgroupId", 0, 9007199254740992.0, &number, false))
		return -EINVAL;
	out->cgroup_id = (uint64_t)number;

	ips = cJSON_GetObjectItemCaseSensitive(json, "ips");
	if (ips && (!cJSON_IsArray(ips) || cJSON_GetArraySize(ips) > VELO_MAX_IPS))
		return -EINVAL;
	cJSON_ArrayForEach (ip, ips) {
		if (ip_from_json(ip, &out->ips[out->n_ips]))
			return -EINVAL;
		out->n_ips++;
	}
	if (dup_string(json, "netconf", &out->netconf, true) ||
	    dup_string(json, "cniArgs", &out->cni_args, false))
		return -EINVAL; /* or out of memory: either way no usable record */
	return 0;
}

int state_record_from_json(const cJSON *json, struct velo_record *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = record_from_json(json, out);
	if (ret) {
		state_record_free(out);
		memset(out, 0, sizeof(*out));
	}
	return ret;
}
