// SPDX-License-Identifier: Apache-2.0
/* velo's IPAM config: range sets, routes and directories, checked before any allocation. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "base/addr.h"
#include "base/error.h"
#include "ipam/range.h"

typedef unsigned __int128 u128;

static unsigned addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

static u128 to_num(int family, const uint8_t addr[16])
{
	u128 num = 0;

	for (unsigned i = 0; i < addr_len(family); i++)
		num = num << 8 | addr[i];
	return num;
}

static void from_num(int family, u128 num, uint8_t addr[16])
{
	unsigned len = addr_len(family);

	memset(addr, 0, 16);
	for (unsigned i = len; i-- > 0;) {
		addr[i] = (uint8_t)num;
		num >>= 8;
	}
}

static u128 host_mask(int family, uint8_t prefix)
{
	unsigned bits = addr_len(family) * 8 - prefix;

	return bits >= 128 ? ~(u128)0 : ((u128)1 << bits) - 1;
}

void ipam_range_addr(const struct ipam_range *range, uint32_t idx, uint8_t addr[16])
{
	from_num(range->family, to_num(range->family, range->start) + idx, addr);
}

bool ipam_range_index(const struct ipam_range *range, int family, const uint8_t addr[16],
		      uint32_t *idx)
{
	u128 num, start;

	if (family != range->family)
		return false;
	num = to_num(family, addr);
	start = to_num(family, range->start);
	if (num < start || num - start >= range->n_slots)
		return false;
	*idx = (uint32_t)(num - start);
	return true;
}

const char *ipam_range_fmt(const struct ipam_range *range, char *buf, unsigned len)
{
	char subnet[64], start[64], end[64];

	velo_addr_fmt(range->family, range->subnet, range->prefix, subnet, sizeof(subnet));
	velo_addr_fmt(range->family, range->start, -1, start, sizeof(start));
	velo_addr_fmt(range->family, range->end, -1, end, sizeof(end));
	snprintf(buf, len, "%s (%s-%s)", subnet, start, end);
	return buf;
}

static int bad(const char *field, const char *why)
{
	return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "%s: %s", field, why);
}

/* An optional string member; absent gives NULL. */
static int member_string(const cJSON *obj, const char *name, const char *field, const char **out)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);

	*out = NULL;
	if (!item)
		return 0;
	if (!cJSON_IsString(item) || !item->valuestring)
		return bad(field, "expected a string");
	*out = item->valuestring;
	return 0;
}

/* An address of family inside [lo, hi] (the subnet's usable part). */
static int range_addr(const cJSON *obj, const char *name, const char *field, int family, u128 lo,
		      u128 hi, u128 *out)
{
	const char *text;
	uint8_t addr[16];
	int ret, got;

	ret = member_string(obj, name, field, &text);
	if (ret || !text)
		return ret;
	if (velo_addr_parse(text, &got, addr))
		return bad(field, "expected an IP address");
	if (got != family)
		return bad(field, "not of the subnet's address family");
	*out = to_num(family, addr);
	if (*out < lo || *out > hi)
		return bad(field, "outside the subnet's usable addresses");
	return 0;
}

static int parse_range(const cJSON *obj, const char *field, struct ipam_range *range)
{
	char name[96];
	const char *text;
	u128 net, lo, hi, start, end, gateway;
	int ret, family;

	if (!cJSON_IsObject(obj))
		return bad(field, "expected an object");
	snprintf(name, sizeof(name), "%s.subnet", field);
	ret = member_string(obj, "subnet", name, &text);
	if (ret)
		return ret;
	if (!text)
		return bad(name, "required");
	if (velo_prefix_parse(text, &family, range->subnet, &range->prefix))
		return bad(name, "expected a CIDR such as 10.244.1.0/24");
	/* Every address, the default route's: never a pod subnet. */
	if (range->prefix == 0)
		return bad(name, family == AF_INET
					 ? "0.0.0.0/0 is every IPv4 address, not a pod subnet"
					 : "::/0 is every IPv6 address, not a pod subnet");
	range->family = family;
	net = to_num(family, range->subnet);
	if (net & host_mask(family, range->prefix))
		return bad(name, "host bits set (not a network address)");
	/* Network address never; IPv4's broadcast never. Two usable addresses at least. */
	lo = net + 1;
	hi = net + host_mask(family, range->prefix) - (family == AF_INET ? 1 : 0);
	if (host_mask(family, range->prefix) < 3 || hi <= lo)
		return bad(name, "too small (needs a gateway and an address)");

	start = lo;
	end = hi;
	gateway = lo;
	snprintf(name, sizeof(name), "%s.rangeStart", field);
	ret = range_addr(obj, "rangeStart", name, family, lo, hi, &start);
	if (ret)
		return ret;
	snprintf(name, sizeof(name), "%s.rangeEnd", field);
	ret = range_addr(obj, "rangeEnd", name, family, lo, hi, &end);
	if (ret)
		return ret;
	if (end < start)
		return bad(name, "before rangeStart");
	snprintf(name, sizeof(name), "%s.gateway", field);
	ret = range_addr(obj, "gateway", name, family, lo, hi, &gateway);
	if (ret)
		return ret;
	if (end - start >= IPAM_RANGE_MAX_SLOTS)
		end = start + IPAM_RANGE_MAX_SLOTS - 1;
	if (start == end && start == gateway)
		return bad(field, "its only address is the gateway");
	from_num(family, start, range->start);
	from_num(family, end, range->end);
	from_num(family, gateway, range->gateway);
	range->n_slots = (uint32_t)(end - start + 1);
	return 0;
}

static bool overlap(const struct ipam_range *a, const struct ipam_range *b)
{
	u128 a0, a1, b0, b1;

	if (a->family != b->family)
		return false;
	a0 = to_num(a->family, a->subnet);
	a1 = a0 + host_mask(a->family, a->prefix);
	b0 = to_num(b->family, b->subnet);
	b1 = b0 + host_mask(b->family, b->prefix);
	return a0 <= b1 && b0 <= a1;
}

/* No two ranges share an address: each has its own allocation file, keyed by subnet. */
static int check_overlaps(const struct ipam_conf *conf)
{
	const struct ipam_range *all[IPAM_MAX_SETS * IPAM_MAX_RANGES];
	unsigned pos[IPAM_MAX_SETS * IPAM_MAX_RANGES][2], n = 0;
	char field[96];

	for (unsigned s = 0; s < conf->n_sets; s++)
		for (unsigned r = 0; r < conf->sets[s].n_ranges; r++) {
			all[n] = &conf->sets[s].ranges[r];
			pos[n][0] = s;
			pos[n][1] = r;
			n++;
		}
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < i; j++) {
			if (!overlap(all[i], all[j]))
				continue;
			snprintf(field, sizeof(field), "ipam.ranges[%u][%u].subnet", pos[i][0],
				 pos[i][1]);
			return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
					"%s: overlaps ipam.ranges[%u][%u].subnet", field, pos[j][0],
					pos[j][1]);
		}
	return 0;
}

static int parse_ranges(const cJSON *ipam, struct ipam_conf *conf)
{
	const cJSON *sets = cJSON_GetObjectItemCaseSensitive(ipam, "ranges"), *set, *item;
	char field[64];
	int ret;

	if (!sets)
		return bad("ipam.ranges", "required (e.g. [[{\"subnet\": \"10.244.1.0/24\"}]])");
	if (!cJSON_IsArray(sets) || cJSON_GetArraySize(sets) == 0)
		return bad("ipam.ranges", "expected a non-empty array of range sets");
	if (cJSON_GetArraySize(sets) > IPAM_MAX_SETS)
		return bad("ipam.ranges", "more than 4 range sets");
	cJSON_ArrayForEach (set, sets) {
		struct ipam_range_set *rs = &conf->sets[conf->n_sets];

		snprintf(field, sizeof(field), "ipam.ranges[%u]", conf->n_sets);
		if (!cJSON_IsArray(set) || cJSON_GetArraySize(set) == 0)
			return bad(field, "expected a non-empty array of ranges");
		if (cJSON_GetArraySize(set) > IPAM_MAX_RANGES)
			return bad(field, "more than 8 ranges");
		cJSON_ArrayForEach (item, set) {
			snprintf(field, sizeof(field), "ipam.ranges[%u][%u]", conf->n_sets,
				 rs->n_ranges);
			ret = parse_range(item, field, &rs->ranges[rs->n_ranges]);
			if (ret)
				return ret;
			if (rs->ranges[rs->n_ranges].family != rs->ranges[0].family)
				return bad(field, "a range set has one address family");
			rs->n_ranges++;
		}
		conf->n_sets++;
	}
	return check_overlaps(conf);
}

static int parse_routes(const cJSON *ipam, struct ipam_conf *conf)
{
	const cJSON *routes = cJSON_GetObjectItemCaseSensitive(ipam, "routes"), *item;
	char field[64];
	const char *text;
	int ret, family;

	if (!routes)
		return 0;
	if (!cJSON_IsArray(routes))
		return bad("ipam.routes", "expected an array");
	if (cJSON_GetArraySize(routes) > IPAM_MAX_ROUTES)
		return bad("ipam.routes", "more than 16 routes");
	cJSON_ArrayForEach (item, routes) {
		struct ipam_route *route = &conf->routes[conf->n_routes];

		snprintf(field, sizeof(field), "ipam.routes[%u].dst", conf->n_routes);
		if (!cJSON_IsObject(item))
			return bad(field, "expected an object with dst");
		ret = member_string(item, "dst", field, &text);
		if (ret)
			return ret;
		if (!text || velo_prefix_parse(text, &route->family, route->dst, &route->prefix))
			return bad(field, "expected a CIDR");
		snprintf(field, sizeof(field), "ipam.routes[%u].gw", conf->n_routes);
		ret = member_string(item, "gw", field, &text);
		if (ret)
			return ret;
		if (text) {
			if (velo_addr_parse(text, &family, route->gateway))
				return bad(field, "expected an IP address");
			if (family != route->family)
				return bad(field, "not of dst's address family");
			route->has_gateway = true;
		}
		conf->n_routes++;
	}
	return 0;
}

static bool has_dotdot(const char *path)
{
	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return true;
	return false;
}

static int parse_dir(const cJSON *ipam, const char *name, char *buf)
{
	char field[48];
	const char *text;
	int ret;

	snprintf(field, sizeof(field), "ipam.%s", name);
	ret = member_string(ipam, name, field, &text);
	if (ret || !text)
		return ret;
	if (!*text && strcmp(name, "hostLocalDataDir") == 0) {
		buf[0] = '\0';
		return 0;
	}
	if (text[0] != '/' || has_dotdot(text))
		return bad(field, "expected an absolute path without .. components");
	if (strlen(text) >= PATH_MAX - 128)
		return bad(field, "too long");
	snprintf(buf, PATH_MAX, "%s", text);
	return 0;
}

int ipam_conf_parse(const cJSON *ipam, const char *state_dir, struct ipam_conf *conf)
{
	int ret;

	memset(conf, 0, sizeof(*conf));
	if (!cJSON_IsObject(ipam))
		return bad("ipam", "expected an object");
	if (snprintf(conf->data_dir, sizeof(conf->data_dir), "%s/ipam", state_dir) >=
	    PATH_MAX - 128)
		return bad("stateDir", "too long");
	snprintf(conf->host_local_dir, sizeof(conf->host_local_dir), "%s", IPAM_HOST_LOCAL_DIR);
	ret = parse_ranges(ipam, conf);
	if (!ret)
		ret = parse_routes(ipam, conf);
	if (!ret)
		ret = parse_dir(ipam, "dataDir", conf->data_dir);
	if (!ret)
		ret = parse_dir(ipam, "hostLocalDataDir", conf->host_local_dir);
	return ret;
}
