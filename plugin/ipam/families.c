// SPDX-License-Identifier: Apache-2.0
/* Which families an IPAM config can hand out, from its ranges, before the IPAM runs. */
#include <string.h>

#include "ipam/families.h"

static bool subnet_is_ipv6(const cJSON *holder)
{
	const cJSON *subnet = cJSON_GetObjectItemCaseSensitive(holder, "subnet");

	/* Not a string: the IPAM rejects the config itself; ours need not guess. */
	return !cJSON_IsString(subnet) || strchr(subnet->valuestring, ':');
}

bool ipam_may_assign_ipv6(const char *ipam_type, const cJSON *ipam)
{
	const cJSON *ranges, *set, *range;
	bool any;

	if (!ipam || (strcmp(ipam_type, "velo") && strcmp(ipam_type, "host-local")))
		return true;
	/* host-local's older top-level "subnet" is one more range set beside "ranges". */
	any = cJSON_HasObjectItem(ipam, "subnet");
	if (any && subnet_is_ipv6(ipam))
		return true;
	ranges = cJSON_GetObjectItemCaseSensitive(ipam, "ranges");
	if (!ranges)
		return !any;
	if (!cJSON_IsArray(ranges))
		return true;
	cJSON_ArrayForEach (set, ranges) {
		if (!cJSON_IsArray(set))
			return true;
		cJSON_ArrayForEach (range, set) {
			if (subnet_is_ipv6(range))
				return true;
			any = true;
		}
	}
	return !any;
}
