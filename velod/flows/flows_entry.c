// SPDX-License-Identifier: Apache-2.0
/* One flow entry (flows_entry.h): what its event stands for, and its line of JSON for GET /flows. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "datapath/flow_names.h"
#include "flows_entry.h"

/* How many events this one stands for: more than 1 for a drop sampled while velod was behind. */
unsigned flows_event_weight(const struct velo_flow_event *event)
{
	return event->weight ? event->weight : 1;
}

/*
 * The Service address and port of a translated connect (what it dialled) or a
 * refused one (its destination); false for any other event.
 */
bool flows_event_service(const struct velo_flow_event *event, const uint8_t **addr, __be16 *port)
{
	if (event->svc_port) {
		*addr = event->svc_addr;
		*port = event->svc_port;
		return true;
	}
	if (event->reason == VELO_FLOW_R_SVC_NO_ENDPOINTS) {
		*addr = event->daddr;
		*port = event->dport;
		return true;
	}
	return false;
}

static const char *addr_text(const uint8_t addr[16], char *buf, size_t len)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff }, zero[16];

	if (!memcmp(addr, zero, sizeof(zero)))
		return ""; /* socket hooks: the source isn't chosen yet */
	if (!memcmp(addr, mapped, sizeof(mapped)))
		return inet_ntop(AF_INET, addr + 12, buf, (socklen_t)len);
	return inet_ntop(AF_INET6, addr, buf, (socklen_t)len);
}

/* ,"policies":["ns/a","ns/b"] from "ns/a,ns/b"; nothing for "". Names need no escaping. */
static void policies_json(const char *names, char *buf, size_t len)
{
	size_t used;

	buf[0] = '\0';
	if (!names[0])
		return;
	used = (size_t)snprintf(buf, len, ",\"policies\":[\"");
	for (const char *c = names; *c && used + 4 < len; c++) {
		if (*c == ',') {
			memcpy(buf + used, "\",\"", 3);
			used += 3;
		} else {
			buf[used++] = *c;
		}
	}
	snprintf(buf + used, len - used, "\"]");
}

/* ',"service":{...}' for a translated or refused connect, else "". */
static void service_json(const struct flow_entry *entry, char *buf, size_t len)
{
	char text[INET6_ADDRSTRLEN];
	const uint8_t *addr;
	__be16 port;

	buf[0] = '\0';
	if (flows_event_service(&entry->event, &addr, &port))
		snprintf(buf, len, ",\"service\":{\"ip\":\"%s\",\"port\":%u,\"name\":\"%s\"}",
			 addr_text(addr, text, sizeof(text)) ?: "", ntohs(port), entry->service);
}

size_t flows_entry_json(const struct flow_entry *entry, char *buf, size_t len)
{
	const struct velo_flow_event *event = &entry->event;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], proto[8], counters[160] = "";
	char policies[FLOW_POD_NAME_MAX * 2], service[VELO_SVC_ENTRY_NAME_MAX + 96];
	time_t secs = (time_t)entry->time_unix;
	char when[40];
	struct tm tm;
	int n;

	gmtime_r(&secs, &tm);
	n = (int)strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + n, sizeof(when) - (size_t)n, ".%06uZ",
		 (unsigned)((entry->time_unix - (double)secs) * 1e6));
	if (event->kind == VELO_FLOW_END)
		snprintf(counters, sizeof(counters),
			 ",\"bytes_out\":%llu,\"bytes_in\":%llu,\"segs_out\":%u,\"segs_in\":%u",
			 (unsigned long long)event->bytes_out, (unsigned long long)event->bytes_in,
			 event->segs_out, event->segs_in);
	policies_json(entry->policies, policies, sizeof(policies));
	service_json(entry, service, sizeof(service));
	/* Pod names are DNS labels and addresses are inet_ntop's: nothing to escape. */
	n = snprintf(buf, len,
		     "{\"seq\":%llu,\"time\":\"%s\",\"kind\":\"%s\",\"verdict\":\"%s\","
		     "\"reason\":\"%s\",\"path\":\"%s\",\"proto\":\"%s\","
		     "\"src\":{\"ip\":\"%s\",\"port\":%u,\"pod\":\"%s\"},"
		     "\"dst\":{\"ip\":\"%s\",\"port\":%u,\"pod\":\"%s\"},"
		     "\"ifindex\":%u,\"identity\":%u,\"bytes\":%u,\"weight\":%u%s%s%s}\n",
		     (unsigned long long)entry->seq, when, velo_flow_kind_name(event->kind),
		     velo_flow_verdict(event->kind), velo_flow_reason_name(event->reason),
		     entry->tunnelled ? "vxlan" : velo_flow_path_name(event->path),
		     velo_flow_proto_name(event->proto, proto, sizeof(proto)),
		     addr_text(event->saddr, src, sizeof(src)) ?: "", ntohs(event->sport),
		     entry->src_pod, addr_text(event->daddr, dst, sizeof(dst)) ?: "",
		     ntohs(event->dport), entry->dst_pod, event->ifindex, event->identity,
		     event->len, flows_event_weight(event), policies, service, counters);
	return n < 0 ? len : (size_t)n;
}
