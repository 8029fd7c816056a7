// SPDX-License-Identifier: Apache-2.0
/* A ClusterNetworkPolicy rule's protocols (cnp_ports.h). */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "policy/cnp_ports.h"

#define CNP_LIST_MAX 25 /* the API's bound on protocols */

/* A member that is absent or null. */
static const cJSON *member(const cJSON *object, const char *name)
{
	const cJSON *item = velo_json_field(object, name);

	return item && !cJSON_IsNull(item) ? item : NULL;
}

/* {destinationPort: {number} | {range: {start, end}}} or {}: every port. */
static int proto_port_parse(const cJSON *json, uint8_t proto, struct velo_pol_port *out)
{
	const cJSON *port = member(json, "destinationPort"), *range;
	int first, last;

	if (!cJSON_IsObject(json))
		return -EINVAL;
	out->proto = proto;
	if (!port)
		return 0;
	range = member(port, "range");
	if (range) {
		if (member(port, "number") ||
		    !velo_json_int(velo_json_field(range, "start"), 1, 65535, &first) ||
		    !velo_json_int(velo_json_field(range, "end"), first, 65535, &last))
			return -EINVAL;
	} else if (velo_json_int(velo_json_field(port, "number"), 1, 65535, &first)) {
		last = first;
	} else {
		return -EINVAL;
	}
	out->port = (uint16_t)first;
	out->end_port = (uint16_t)last;
	return 0;
}

static int protocol_parse(const cJSON *json, struct velo_pol_port *out)
{
	static const struct {
		const char *name;
		uint8_t proto;
	} protos[] = { { "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP }, { "sctp", IPPROTO_SCTP } };
	const cJSON *named = member(json, "destinationNamedPort");
	unsigned found = !!named;
	int ret = -EINVAL;

	if (!cJSON_IsObject(json))
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		const cJSON *proto = member(json, protos[i].name);

		if (proto) {
			found++;
			ret = proto_port_parse(proto, protos[i].proto, out);
		}
	}
	if (found != 1)
		return -EINVAL;
	if (!named)
		return ret;
	/* An IANA_SVC_NAME: at most 15 characters; any protocol the pod gives it. */
	if (!cJSON_IsString(named) || !named->valuestring[0] ||
	    strlen(named->valuestring) >= sizeof(out->name))
		return -EINVAL;
	memcpy(out->name, named->valuestring, strlen(named->valuestring) + 1);
	return 0;
}

int velo_pol_cnp_ports_parse(const cJSON *list, struct velo_pol_cnp_rule *rule)
{
	const cJSON *item;

	if (!list)
		return 0;
	if (!cJSON_IsArray(list) || !cJSON_GetArraySize(list) ||
	    cJSON_GetArraySize(list) > CNP_LIST_MAX)
		return -EINVAL;
	rule->ports = calloc((size_t)cJSON_GetArraySize(list), sizeof(*rule->ports));
	if (!rule->ports)
		return -ENOMEM;
	cJSON_ArrayForEach (item, list) {
		int ret = protocol_parse(item, &rule->ports[rule->n_ports++]);

		if (ret)
			return ret;
	}
	return 0;
}
