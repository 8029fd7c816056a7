// SPDX-License-Identifier: Apache-2.0
/* Reading the flow ring buffer into velod's memory and metrics (flows.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "base/log.h"
#include "datapath/flow_maps.h"
#include "datapath/flow_names.h"
#include "flows.h"
#include "flows_series.h"
#include "flows_socks.h"
#include "policy/policy.h"
#include "policy/policy_show.h"
#include "services/services.h"

#define NS_PER_S 1000000000ull
#define OPEN_RETRY_NS NS_PER_S
#define SERIES_IDLE_NS (600 * NS_PER_S) /* a metric series not counting this long goes */
#define SERIES_EXPIRE_EVERY_NS (30 * NS_PER_S)

/* The last policy drop's question and velod's answer, valid while the policy didn't sync. */
struct policies_asked {
	bool valid;
	uint32_t identity;
	bool ingress;
	uint64_t syncs;
	char names[FLOW_POD_NAME_MAX];
};

struct flows {
	const struct agent_config *config;
	const struct policy *policy;
	const struct services *services;
	struct policies_asked asked;
	struct ring_buffer *rb;
	int rb_fd;
	uint32_t ring_bytes;
	uint64_t next_open_ns;
	uint64_t next_read_ns; /* events don't wake velod until the ring fills: it looks anyway */
	struct flow_entry *ring; /* config->flow_buffer entries, seq % cap */
	uint64_t next_seq;
	uint64_t read_total;
	double mono_to_unix; /* CLOCK_REALTIME - CLOCK_MONOTONIC, seconds, per batch */
	uint64_t batch_now_ns;
	struct flow_pods *pods;
	struct flow_socks *socks; /* open TCP sockets' sides, to turn their ends */
	struct flow_series drops, pairs;
	uint64_t next_expire_ns;
};

struct flows *flows_new(const struct agent_config *config, const struct policy *policy,
			const struct services *services)
{
	struct flows *flows;
	int ret;

	if (!config->flow_buffer) {
		errno = 0;
		return NULL;
	}
	flows = calloc(1, sizeof(*flows));
	if (!flows)
		return NULL;
	flows->config = config;
	flows->policy = policy;
	flows->services = services;
	flows->rb_fd = -1;
	flows->next_seq = 1;
	flows->ring = calloc(config->flow_buffer, sizeof(*flows->ring));
	flows->pods = flow_pods_new(config);
	flows->socks = flow_socks_new(VELO_MAX_FLOW_TCP);
	if (!flows->ring || !flows->pods || !flows->socks ||
	    flow_series_init(&flows->drops, config->max_flow_series) ||
	    flow_series_init(&flows->pairs, config->max_flow_series)) {
		flows_free(flows);
		errno = ENOMEM;
		return NULL;
	}
	if (config->flow_ring_bytes) {
		ret = velo_flow_rb_create(&config->paths, config->flow_ring_bytes, 5000);
		if (ret)
			pr_warn("flows: pinning a ring of %u bytes: %s", config->flow_ring_bytes,
				strerror(-ret));
	}
	return flows;
}

void flows_free(struct flows *flows)
{
	if (!flows)
		return;
	ring_buffer__free(flows->rb);
	if (flows->rb_fd >= 0)
		close(flows->rb_fd);
	flow_pods_free(flows->pods);
	flow_socks_free(flows->socks);
	flow_series_free(&flows->drops);
	flow_series_free(&flows->pairs);
	free(flows->ring);
	free(flows);
}

/* How many events this one stands for: more than 1 for a drop sampled while velod was behind. */
static unsigned event_weight(const struct velo_flow_event *event)
{
	return event->weight ? event->weight : 1;
}

static void count(struct flows *flows, const struct flow_entry *entry)
{
	const struct velo_flow_event *event = &entry->event;
	uint64_t weight = event_weight(event);
	const char *pod;

	if (event->kind == VELO_FLOW_DROP || event->kind == VELO_FLOW_TRACE) {
		/* The pod it happened to: the receiver's for an ingress policy drop. */
		pod = event->reason == VELO_FLOW_R_POLICY_INGRESS ? entry->dst_pod : entry->src_pod;
		flow_series_add_n(
			&flows->drops,
			(const char *[]){ pod, velo_flow_reason_name(event->reason), NULL },
			weight);
	}
	if (event->kind == VELO_FLOW_START || event->kind == VELO_FLOW_DROP)
		flow_series_add_n(&flows->pairs,
				  (const char *[]){ entry->src_pod, entry->dst_pod,
						    velo_flow_verdict(event->kind) },
				  weight);
}

static bool spoofed(const struct velo_flow_event *event)
{
	return event->reason == VELO_FLOW_R_SPOOFED || event->reason == VELO_FLOW_R_POLICY_SPOOFED;
}

/* Dropped on the way out of the pod behind ifindex (the deny list's tc half). */
static bool from_veth_pod(const struct velo_flow_event *event)
{
	return event->ifindex && (event->reason == VELO_FLOW_R_DENY_LIST ||
				  event->reason == VELO_FLOW_R_DENY_PENDING);
}

/* A policy's egress or ingress drop: the policies that isolate the pod whose policy said no. */
static void name_policies(struct flows *flows, struct flow_entry *entry)
{
	const struct velo_flow_event *event = &entry->event;
	bool ingress = event->reason == VELO_FLOW_R_POLICY_INGRESS;
	struct policies_asked *asked = &flows->asked;

	entry->policies[0] = '\0';
	if (!flows->policy || !event->identity ||
	    (!ingress && event->reason != VELO_FLOW_R_POLICY_EGRESS))
		return;
	/* Drops come in runs of one flow (a retrying client, a flood): asked once per sync. */
	if (!asked->valid || asked->identity != event->identity || asked->ingress != ingress ||
	    asked->syncs != flows->policy->syncs) {
		policy_isolating(flows->policy, event->identity, ingress, asked->names,
				 sizeof(asked->names));
		asked->valid = true;
		asked->identity = event->identity;
		asked->ingress = ingress;
		asked->syncs = flows->policy->syncs;
	}
	memcpy(entry->policies, asked->names, sizeof(entry->policies));
}

/* The sending task's cgroup, 0 when the event has none (TCP STARTs and ENDs carry a cookie). */
static uint64_t event_cgroup(const struct velo_flow_event *event)
{
	if (event->proto == 6 && (event->kind == VELO_FLOW_START || event->kind == VELO_FLOW_END))
		return 0;
	return event->cgroup_id;
}

/*
 * The Service address and port of a translated connect (what it dialled) or a
 * refused one (its destination); false for any other event.
 */
static bool event_service(const struct velo_flow_event *event, const uint8_t **addr, __be16 *port)
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

static void name_service(const struct flows *flows, struct flow_entry *entry)
{
	const struct velo_flow_event *event = &entry->event;
	struct velo_svc_key key = { .proto = event->proto };
	const uint8_t *addr;
	const char *name;

	entry->service[0] = '\0';
	if (!event_service(event, &addr, &key.port))
		return;
	memcpy(key.addr, addr, sizeof(key.addr));
	name = flows->services ? services_port_name(flows->services, &key) : NULL;
	if (name)
		snprintf(entry->service, sizeof(entry->service), "%s", name);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct flows *flows = ctx;
	struct flow_entry *entry;

	if (size < sizeof(struct velo_flow_event))
		return 0; /* not ours: a newer layout would bump the map's version */
	entry = &flows->ring[flows->next_seq % flows->config->flow_buffer];
	memcpy(&entry->event, data, sizeof(entry->event));
	entry->seq = flows->next_seq++;
	entry->time_unix = (double)entry->event.ts_ns / NS_PER_S + flows->mono_to_unix;
	flow_socks_orient(flows->socks, &entry->event);
	if (spoofed(&entry->event))
		/* The source is a lie: the sender is the pod behind the veth it came from. */
		flow_pods_by_ifindex(flows->pods, entry->event.ifindex, entry->src_pod,
				     sizeof(entry->src_pod), flows->batch_now_ns);
	else
		flow_pods_by_addr(flows->pods, entry->event.saddr, entry->src_pod,
				  sizeof(entry->src_pod), flows->batch_now_ns);
	if (!entry->src_pod[0] && from_veth_pod(&entry->event))
		/* A link-local source (neighbour discovery, MLD): still the veth's pod. */
		flow_pods_by_ifindex(flows->pods, entry->event.ifindex, entry->src_pod,
				     sizeof(entry->src_pod), flows->batch_now_ns);
	if (!entry->src_pod[0])
		flow_pods_by_cgroup(flows->pods, event_cgroup(&entry->event), entry->src_pod,
				    sizeof(entry->src_pod), flows->batch_now_ns);
	flow_pods_by_addr(flows->pods, entry->event.daddr, entry->dst_pod, sizeof(entry->dst_pod),
			  flows->batch_now_ns);
	name_policies(flows, entry);
	name_service(flows, entry);
	flows->read_total++;
	count(flows, entry);
	return 0;
}

/* A gone pod's or an old pair's series leaves /metrics after SERIES_IDLE_NS without counting. */
static void expire_series(struct flows *flows, uint64_t now_ns)
{
	unsigned gone;

	if (now_ns < flows->next_expire_ns)
		return;
	flows->next_expire_ns = now_ns + SERIES_EXPIRE_EVERY_NS;
	gone = flow_series_expire(&flows->drops, now_ns, SERIES_IDLE_NS) +
	       flow_series_expire(&flows->pairs, now_ns, SERIES_IDLE_NS);
	if (gone)
		pr_debug("flows: %u metric series idle for %llu s went", gone,
			 (unsigned long long)(SERIES_IDLE_NS / NS_PER_S));
}

void flows_step(struct flows *flows, uint64_t now_ns)
{
	int fd;

	if (flows)
		expire_series(flows, now_ns);
	if (!flows || flows->rb || now_ns < flows->next_open_ns)
		return;
	flows->next_open_ns = now_ns + OPEN_RETRY_NS;
	fd = velo_flow_rb_open(&flows->config->paths, &flows->ring_bytes);
	if (fd < 0) {
		if (fd != -ENOENT)
			pr_warn("flows: opening the ring: %s", strerror(-fd));
		return;
	}
	flows->rb = ring_buffer__new(fd, on_event, flows, NULL);
	if (!flows->rb) {
		pr_warn("flows: reading the ring: %s", strerror(errno));
		close(fd);
		return;
	}
	flows->rb_fd = fd;
	if (flows->config->flow_ring_bytes && flows->ring_bytes != flows->config->flow_ring_bytes)
		pr_warn("flows: the pinned ring has %u bytes, not flowRingBytes' %u (it was pinned "
			"before; a new size needs the pin removed)",
			flows->ring_bytes, flows->config->flow_ring_bytes);
	pr_info("flows: reading the ring (%u bytes), keeping the last %u events", flows->ring_bytes,
		flows->config->flow_buffer);
}

uint64_t flows_deadline(const struct flows *flows)
{
	if (!flows)
		return UINT64_MAX;
	return flows->rb ? flows->next_read_ns : flows->next_open_ns;
}

int flows_fd(const struct flows *flows)
{
	return flows && flows->rb ? ring_buffer__epoll_fd(flows->rb) : -1;
}

bool flows_consume(struct flows *flows)
{
	uint64_t before;
	struct timespec real, mono;

	if (!flows || !flows->rb)
		return false;
	before = flows->next_seq;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	flows->mono_to_unix = (double)(real.tv_sec - mono.tv_sec) +
			      (double)(real.tv_nsec - mono.tv_nsec) / NS_PER_S;
	flows->batch_now_ns = (uint64_t)mono.tv_sec * NS_PER_S + (uint64_t)mono.tv_nsec;
	flows->next_read_ns = flows->batch_now_ns + VELO_FLOW_POLL_MS * (NS_PER_S / 1000);
	flow_series_clock(&flows->drops, flows->batch_now_ns);
	flow_series_clock(&flows->pairs, flows->batch_now_ns);
	/* Bounded: a flood can't keep the loop from its other work. */
	ring_buffer__consume(flows->rb);
	return flows->next_seq != before;
}

const struct flow_entry *flows_get(const struct flows *flows, uint64_t seq)
{
	if (!flows || seq < flows_first_seq(flows) || seq >= flows->next_seq)
		return NULL;
	return &flows->ring[seq % flows->config->flow_buffer];
}

uint64_t flows_first_seq(const struct flows *flows)
{
	uint64_t cap = flows->config->flow_buffer;

	return flows->next_seq > cap ? flows->next_seq - cap : 1;
}

uint64_t flows_next_seq(const struct flows *flows)
{
	return flows->next_seq;
}

uint64_t flows_read_total(const struct flows *flows)
{
	return flows ? flows->read_total : 0;
}

uint32_t flows_ring_bytes(const struct flows *flows)
{
	return flows && flows->rb ? flows->ring_bytes : 0;
}

const struct flow_series *flows_drops(const struct flows *flows)
{
	return &flows->drops;
}

const struct flow_series *flows_pairs(const struct flows *flows)
{
	return &flows->pairs;
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
	if (event_service(&entry->event, &addr, &port))
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
		     velo_flow_path_name(event->path),
		     velo_flow_proto_name(event->proto, proto, sizeof(proto)),
		     addr_text(event->saddr, src, sizeof(src)) ?: "", ntohs(event->sport),
		     entry->src_pod, addr_text(event->daddr, dst, sizeof(dst)) ?: "",
		     ntohs(event->dport), entry->dst_pod, event->ifindex, event->identity,
		     event->len, event_weight(event), policies, service, counters);
	return n < 0 ? len : (size_t)n;
}
