// SPDX-License-Identifier: Apache-2.0
/* veloctl observe's filters (flow_filter.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/flow_names.h"
#include "flow_filter.h"

void flow_filter_init(struct flow_filter *filter)
{
	memset(filter, 0, sizeof(*filter));
	filter->port = filter->proto = filter->verdict = filter->reason = -1;
}

int flow_duration_parse(const char *text, double *seconds)
{
	static const struct {
		char unit;
		double seconds;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 } };
	char *end;
	double value;

	errno = 0;
	value = strtod(text, &end);
	if (errno || end == text || !(value > 0))
		return -EINVAL;
	if (!*end) {
		*seconds = value;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (end[0] == units[i].unit && !end[1]) {
			*seconds = value * units[i].seconds;
			return 0;
		}
	return -EINVAL;
}

/* An address as velod prints it: what inet_ntop makes of it. */
static int normalise_ip(const char *text, char *buf, size_t len)
{
	unsigned char addr[16];

	if (inet_pton(AF_INET, text, addr) == 1)
		return inet_ntop(AF_INET, addr, buf, (socklen_t)len) ? 0 : -EINVAL;
	if (inet_pton(AF_INET6, text, addr) == 1)
		return inet_ntop(AF_INET6, addr, buf, (socklen_t)len) ? 0 : -EINVAL;
	return -EINVAL;
}

static int set_text(char *dst, size_t len, const char *value)
{
	if (!*value || strlen(value) >= len)
		return -EINVAL;
	memcpy(dst, value, strlen(value) + 1);
	return 0;
}

static int parse_port(const char *arg, int *port)
{
	char *end;
	long value;

	errno = 0;
	value = strtol(arg, &end, 10);
	if (errno || *end || end == arg || value < 0 || value > 65535)
		return -EINVAL;
	*port = (int)value;
	return 0;
}

/* A name of the table into *out (its index), via parse; -EINVAL when unknown. */
static int parse_named(const char *arg, int (*parse)(const char *), int *out)
{
	int value = parse(arg);

	if (value < 0)
		return value;
	*out = value;
	return 0;
}

int flow_filter_option(struct flow_filter *filter, const char *name, const char *arg)
{
	if (!strcmp(name, "follow")) {
		filter->follow = true;
		return 0;
	}
	if (!strcmp(name, "pod"))
		return strchr(arg, '/') ? set_text(filter->pod, sizeof(filter->pod), arg) : -EINVAL;
	if (!strcmp(name, "service"))
		return strchr(arg, '/') && !strchr(arg, ':')
			       ? set_text(filter->service, sizeof(filter->service), arg)
			       : -EINVAL;
	if (!strcmp(name, "namespace"))
		return set_text(filter->pod_namespace, sizeof(filter->pod_namespace), arg);
	if (!strcmp(name, "ip"))
		return normalise_ip(arg, filter->ip, sizeof(filter->ip));
	if (!strcmp(name, "port"))
		return parse_port(arg, &filter->port);
	if (!strcmp(name, "protocol"))
		return parse_named(arg, velo_flow_proto_parse, &filter->proto);
	if (!strcmp(name, "reason"))
		return parse_named(arg, velo_flow_reason_parse, &filter->reason);
	if (!strcmp(name, "verdict")) {
		static const char *const verdicts[] = { "forwarded", "dropped", "audit" };

		for (unsigned i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++)
			if (!strcmp(arg, verdicts[i])) {
				filter->verdict = (int)i;
				return 0;
			}
		return -EINVAL;
	}
	if (!strcmp(name, "since"))
		return flow_duration_parse(arg, &filter->since_s);
	return -EINVAL;
}

static const char *string_of(const cJSON *object, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);

	return cJSON_IsString(item) ? item->valuestring : "";
}

static bool in_namespace(const char *pod, const char *pod_namespace)
{
	size_t len = strlen(pod_namespace);

	return !strncmp(pod, pod_namespace, len) && pod[len] == '/';
}

/* velod names a service port "<ns>/<name>:<port>/<proto>": the Service is what comes before ':'. */
static bool of_service(const cJSON *flow, const char *service)
{
	const char *name = string_of(cJSON_GetObjectItemCaseSensitive(flow, "service"), "name");
	size_t len = strlen(service);

	return !strncmp(name, service, len) && name[len] == ':';
}

/* Whether one end (src or dst) passes the end filters: pod, namespace, IP, port. */
static bool end_matches(const struct flow_filter *filter, const cJSON *end, char what)
{
	const cJSON *port = cJSON_GetObjectItemCaseSensitive(end, "port");

	switch (what) {
	case 'p':
		return !strcmp(string_of(end, "pod"), filter->pod);
	case 'n':
		return in_namespace(string_of(end, "pod"), filter->pod_namespace);
	case 'i':
		return !strcmp(string_of(end, "ip"), filter->ip);
	default:
		return cJSON_IsNumber(port) && port->valueint == filter->port;
	}
}

static bool either_end(const struct flow_filter *filter, const cJSON *flow, char what)
{
	return end_matches(filter, cJSON_GetObjectItemCaseSensitive(flow, "src"), what) ||
	       end_matches(filter, cJSON_GetObjectItemCaseSensitive(flow, "dst"), what);
}

bool flow_filter_match(const struct flow_filter *filter, const cJSON *flow)
{
	char proto[8];

	if (filter->pod[0] && !either_end(filter, flow, 'p'))
		return false;
	if (filter->pod_namespace[0] && !either_end(filter, flow, 'n'))
		return false;
	if (filter->service[0] && !of_service(flow, filter->service))
		return false;
	if (filter->ip[0] && !either_end(filter, flow, 'i'))
		return false;
	if (filter->port >= 0 && !either_end(filter, flow, 'P'))
		return false;
	if (filter->proto >= 0 &&
	    strcmp(string_of(flow, "proto"),
		   velo_flow_proto_name((uint8_t)filter->proto, proto, sizeof(proto))))
		return false;
	if (filter->verdict >= 0 &&
	    strcmp(string_of(flow, "verdict"), filter->verdict == 2 ? "audit"
					       : filter->verdict    ? "dropped"
								    : "forwarded"))
		return false;
	if (filter->reason >= 0 &&
	    strcmp(string_of(flow, "reason"), velo_flow_reason_name((unsigned)filter->reason)))
		return false;
	return true;
}
