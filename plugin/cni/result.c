// SPDX-License-Identifier: Apache-2.0
/*
 * CNI results between 0.3.0 and 1.1.0. The formats differ only in the
 * per-address "version" field (0.3.x and 0.4.0 have it, 1.0.0 dropped it),
 * so one parser reads them all and one printer writes each.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/error.h"
#include "cni/result.h"

/* ---- parsing ---- */

/*
 * An IPAM plugin's answer is code 101; a prevResult handed in by the runtime
 * is part of the config (code 7). cJSON keeps the key an item sits under.
 */
static int __attribute__((format(printf, 2, 3)))
result_fail(const cJSON *json, const char *fmt, ...)
{
	bool prev = json->string && !strcmp(json->string, "prevResult");
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (prev)
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "prevResult: %s", what);
	return cni_fail(-EINVAL, VELO_ERR_IPAM, "IPAM result: %s", what);
}

/* An optional array of at most max entries; NULL when absent. */
static int get_array(const cJSON *json, const char *key, unsigned max, const cJSON **out)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(json, key);

	*out = NULL;
	if (!item || cJSON_IsNull(item))
		return 0;
	if (!cJSON_IsArray(item))
		return result_fail(json, "%s: must be an array", key);
	if ((unsigned)cJSON_GetArraySize(item) > max)
		return result_fail(json, "%s: more than %u entries", key, max);
	*out = item;
	return 0;
}

/* An optional string member; NULL when absent. */
static int get_string(const cJSON *json, const cJSON *entry, const char *where, const char *key,
		      const char **out)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(entry, key);

	*out = NULL;
	if (!item)
		return 0;
	if (!cJSON_IsString(item))
		return result_fail(json, "%s.%s: must be a string", where, key);
	*out = item->valuestring;
	return 0;
}

static bool mac_valid(const char *mac)
{
	if (strlen(mac) != 17)
		return false;
	for (int i = 0; i < 17; i++) {
		bool hex = (mac[i] >= '0' && mac[i] <= '9') || (mac[i] >= 'a' && mac[i] <= 'f') ||
			   (mac[i] >= 'A' && mac[i] <= 'F');

		if (i % 3 == 2 ? mac[i] != ':' : !hex)
			return false;
	}
	return true;
}

static int parse_interface(const cJSON *json, const cJSON *entry, unsigned index,
			   struct velo_interface *iface)
{
	const char *name, *mac, *sandbox;
	char where[32];
	int ret;

	snprintf(where, sizeof(where), "interfaces[%u]", index);
	if (!cJSON_IsObject(entry))
		return result_fail(json, "%s: must be an object", where);
	ret = get_string(json, entry, where, "name", &name);
	if (!ret)
		ret = get_string(json, entry, where, "mac", &mac);
	if (!ret)
		ret = get_string(json, entry, where, "sandbox", &sandbox);
	if (ret)
		return ret;
	if (!name || !*name)
		return result_fail(json, "%s.name: required", where);
	if (strlen(name) >= sizeof(iface->name))
		return result_fail(json, "%s.name: longer than %zu characters", where,
				   sizeof(iface->name) - 1);
	if (mac && *mac && !mac_valid(mac))
		return result_fail(json, "%s.mac: not a MAC address: \"%s\"", where, mac);
	if (sandbox && strlen(sandbox) >= PATH_MAX)
		return result_fail(json, "%s.sandbox: too long", where);
	if (sandbox && *sandbox) {
		iface->sandbox = strdup(sandbox);
		if (!iface->sandbox)
			return cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "out of memory");
	}
	snprintf(iface->name, sizeof(iface->name), "%s", name);
	snprintf(iface->mac, sizeof(iface->mac), "%s", mac ? mac : "");
	return 0;
}

static int parse_ip(const cJSON *json, const cJSON *entry, unsigned index, unsigned n_interfaces,
		    struct velo_ip *ip)
{
	const char *address, *gateway, *version;
	const cJSON *interface;
	char where[32];
	int ret, family;

	snprintf(where, sizeof(where), "ips[%u]", index);
	ip->interface = -1;
	if (!cJSON_IsObject(entry))
		return result_fail(json, "%s: must be an object", where);
	ret = get_string(json, entry, where, "address", &address);
	if (!ret)
		ret = get_string(json, entry, where, "gateway", &gateway);
	if (!ret)
		ret = get_string(json, entry, where, "version", &version);
	if (ret)
		return ret;

	if (!address)
		return result_fail(json, "%s.address: required", where);
	if (velo_prefix_parse(address, &ip->family, ip->addr, &ip->prefix))
		return result_fail(json, "%s.address: not an address with prefix length: \"%s\"",
				   where, address);
	if (gateway) {
		if (velo_addr_parse(gateway, &family, ip->gateway))
			return result_fail(json, "%s.gateway: not an IP address: \"%s\"", where,
					   gateway);
		if (family != ip->family)
			return result_fail(json, "%s.gateway: %s is not in the family of %s", where,
					   gateway, address);
		ip->has_gateway = true;
	}
	/* 0.3.x and 0.4.0 name the family; a result that names it must name the right one. */
	if (version) {
		if (strcmp(version, "4") && strcmp(version, "6"))
			return result_fail(json, "%s.version: must be \"4\" or \"6\", not \"%s\"",
					   where, version);
		if ((version[0] == '4') != (ip->family == AF_INET))
			return result_fail(json, "%s.version: \"%s\" does not match %s", where,
					   version, address);
	}

	interface = cJSON_GetObjectItemCaseSensitive(entry, "interface");
	if (interface && !cJSON_IsNull(interface)) {
		double value = cJSON_GetNumberValue(interface);

		/* Range first: casting an out-of-range double to int is undefined. */
		if (!cJSON_IsNumber(interface) || value < 0 || value > INT_MAX ||
		    value != (double)(int)value)
			return result_fail(json, "%s.interface: must be an index (integer >= 0)",
					   where);
		if ((unsigned)value >= n_interfaces)
			return result_fail(json, "%s.interface: %d is past the %u interfaces",
					   where, (int)value, n_interfaces);
		ip->interface = (int)value;
	}
	return 0;
}

static int parse_route(const cJSON *json, const cJSON *entry, unsigned index,
		       struct velo_route *route)
{
	const char *dst, *gw;
	char where[32];
	int ret, family;

	snprintf(where, sizeof(where), "routes[%u]", index);
	if (!cJSON_IsObject(entry))
		return result_fail(json, "%s: must be an object", where);
	ret = get_string(json, entry, where, "dst", &dst);
	if (!ret)
		ret = get_string(json, entry, where, "gw", &gw);
	if (ret)
		return ret;
	if (!dst)
		return result_fail(json, "%s.dst: required", where);
	if (velo_prefix_parse(dst, &route->family, route->dst, &route->prefix))
		return result_fail(json, "%s.dst: not a prefix: \"%s\"", where, dst);
	if (gw) {
		if (velo_addr_parse(gw, &family, route->gateway))
			return result_fail(json, "%s.gw: not an IP address: \"%s\"", where, gw);
		if (family != route->family)
			return result_fail(json, "%s.gw: %s is not in the family of %s", where, gw,
					   dst);
		route->has_gateway = true;
	}
	return 0;
}

static int parse_version(const cJSON *json)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(json, "cniVersion");
	enum cni_version version;

	/* A prevResult may come without one; its fields still say what it is. */
	if (!item)
		return 0;
	if (!cJSON_IsString(item))
		return result_fail(json, "cniVersion: must be a string");
	version = cni_version_parse(item->valuestring);
	if (version == CNI_V_UNKNOWN)
		return result_fail(json, "cniVersion: unknown version \"%s\"", item->valuestring);
	if (version < CNI_V_0_3_0)
		return result_fail(json, "cniVersion: %s results (ip4/ip6) are not supported",
				   item->valuestring);
	return 0;
}

int velo_result_parse(const cJSON *json, struct velo_result *out)
{
	const cJSON *interfaces, *ips, *routes, *dns, *entry;
	unsigned i;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(json))
		return cni_fail(-EINVAL, VELO_ERR_IPAM, "IPAM result: must be a JSON object");
	ret = parse_version(json);
	if (!ret)
		ret = get_array(json, "interfaces", VELO_MAX_IFACES, &interfaces);
	if (!ret)
		ret = get_array(json, "ips", VELO_MAX_IPS, &ips);
	if (!ret)
		ret = get_array(json, "routes", VELO_MAX_ROUTES, &routes);
	if (ret)
		return ret;

	i = 0;
	cJSON_ArrayForEach (entry, interfaces) {
		ret = parse_interface(json, entry, i, &out->interfaces[i]);
		if (ret)
			goto err;
		out->n_interfaces = ++i;
	}
	i = 0;
	cJSON_ArrayForEach (entry, ips) {
		ret = parse_ip(json, entry, i, out->n_interfaces, &out->ips[i]);
		if (ret)
			goto err;
		out->n_ips = ++i;
	}
	i = 0;
	cJSON_ArrayForEach (entry, routes) {
		ret = parse_route(json, entry, i, &out->routes[i]);
		if (ret)
			goto err;
		out->n_routes = ++i;
	}

	dns = cJSON_GetObjectItemCaseSensitive(json, "dns");
	if (dns && !cJSON_IsNull(dns)) {
		if (!cJSON_IsObject(dns)) {
			ret = result_fail(json, "dns: must be an object");
			goto err;
		}
		out->dns = cJSON_Duplicate(dns, true);
		if (!out->dns) {
			ret = cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "out of memory");
			goto err;
		}
	}
	return 0;

err:
	velo_result_free(out);
	memset(out, 0, sizeof(*out));
	return ret;
}

void velo_result_free(struct velo_result *result)
{
	for (unsigned i = 0; i < VELO_MAX_IFACES; i++) {
		free(result->interfaces[i].sandbox);
		result->interfaces[i].sandbox = NULL;
	}
	cJSON_Delete(result->dns);
	result->dns = NULL;
}

/* ---- printing ---- */

static bool add_string(cJSON *object, const char *key, const char *value)
{
	return cJSON_AddStringToObject(object, key, value) != NULL;
}

static bool add_addr(cJSON *object, const char *key, int family, const uint8_t addr[16], int prefix)
{
	char text[INET6_ADDRSTRLEN + 4];

	return velo_addr_fmt(family, addr, prefix, text, sizeof(text)) &&
	       add_string(object, key, text);
}

static bool print_interfaces(cJSON *root, const struct velo_result *result)
{
	cJSON *array;

	if (result->n_interfaces == 0)
		return true;
	array = cJSON_AddArrayToObject(root, "interfaces");
	if (!array)
		return false;
	for (unsigned i = 0; i < result->n_interfaces && i < VELO_MAX_IFACES; i++) {
		const struct velo_interface *iface = &result->interfaces[i];
		cJSON *entry = cJSON_CreateObject();

		if (!entry)
			return false;
		cJSON_AddItemToArray(array, entry);
		if (!add_string(entry, "name", iface->name) ||
		    (iface->mac[0] && !add_string(entry, "mac", iface->mac)) ||
		    (iface->sandbox && !add_string(entry, "sandbox", iface->sandbox)))
			return false;
	}
	return true;
}

static bool print_ips(cJSON *root, const struct velo_result *result, enum cni_version version)
{
	cJSON *array = cJSON_AddArrayToObject(root, "ips");

	if (!array)
		return false;
	for (unsigned i = 0; i < result->n_ips && i < VELO_MAX_IPS; i++) {
		const struct velo_ip *ip = &result->ips[i];
		cJSON *entry = cJSON_CreateObject();

		if (!entry)
			return false;
		cJSON_AddItemToArray(array, entry);
		if (version < CNI_V_1_0_0 &&
		    !add_string(entry, "version", ip->family == AF_INET ? "4" : "6"))
			return false;
		if (ip->interface >= 0 &&
		    !cJSON_AddNumberToObject(entry, "interface", ip->interface))
			return false;
		if (!add_addr(entry, "address", ip->family, ip->addr, ip->prefix) ||
		    (ip->has_gateway && !add_addr(entry, "gateway", ip->family, ip->gateway, -1)))
			return false;
	}
	return true;
}

static bool print_routes(cJSON *root, const struct velo_result *result)
{
	cJSON *array;

	if (result->n_routes == 0)
		return true;
	array = cJSON_AddArrayToObject(root, "routes");
	if (!array)
		return false;
	for (unsigned i = 0; i < result->n_routes && i < VELO_MAX_ROUTES; i++) {
		const struct velo_route *route = &result->routes[i];
		cJSON *entry = cJSON_CreateObject();

		if (!entry)
			return false;
		cJSON_AddItemToArray(array, entry);
		if (!add_addr(entry, "dst", route->family, route->dst, route->prefix) ||
		    (route->has_gateway &&
		     !add_addr(entry, "gw", route->family, route->gateway, -1)))
			return false;
	}
	return true;
}

cJSON *velo_result_to_json(const struct velo_result *result, enum cni_version version)
{
	const char *version_str = cni_version_str(version);
	cJSON *root, *dns;

	if (version < CNI_V_0_3_0 || version > CNI_V_NEWEST || !version_str) {
		errno = EINVAL;
		return NULL;
	}
	errno = 0;
	root = cJSON_CreateObject();
	if (!root)
		goto err_nomem;
	if (!add_string(root, "cniVersion", version_str) || !print_interfaces(root, result) ||
	    !print_ips(root, result, version) || !print_routes(root, result))
		goto err_delete;
	if (result->dns) {
		dns = cJSON_Duplicate(result->dns, true);
		if (!dns || !cJSON_AddItemToObject(root, "dns", dns)) {
			cJSON_Delete(dns);
			goto err_delete;
		}
	}
	return root;

err_delete:
	cJSON_Delete(root);
err_nomem:
	/* add_addr fails only on memory or on an address struct nobody could have parsed. */
	if (!errno || errno == ENOSPC)
		errno = ENOMEM;
	return NULL;
}
