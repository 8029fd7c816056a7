// SPDX-License-Identifier: Apache-2.0
/* Reading the flow ring buffer into velod's memory and metrics (flows.h). */
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
#include "flows_naming.h"
#include "flows_series.h"
#include "flows_socks.h"

#define NS_PER_S 1000000000ull
#define OPEN_RETRY_NS NS_PER_S
#define SERIES_IDLE_NS (600 * NS_PER_S) /* a metric series not counting this long goes */
#define SERIES_EXPIRE_EVERY_NS (30 * NS_PER_S)

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
	struct flow_series drops, pairs, audits;
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
	    flow_series_init(&flows->pairs, config->max_flow_series) ||
	    flow_series_init(&flows->audits, config->max_flow_series)) {
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
	flow_series_free(&flows->audits);
	free(flows->ring);
	free(flows);
}

static void count(struct flows *flows, const struct flow_entry *entry)
{
	const struct velo_flow_event *event = &entry->event;
	uint64_t weight = flows_event_weight(event);
	const char *pod;

	if (event->kind == VELO_FLOW_DROP || event->kind == VELO_FLOW_TRACE) {
		/* The pod it happened to: the receiver's for an ingress policy drop. */
		pod = event->reason == VELO_FLOW_R_POLICY_INGRESS ? entry->dst_pod : entry->src_pod;
		flow_series_add_n(
			&flows->drops,
			(const char *[]){ pod, velo_flow_reason_name(event->reason), NULL },
			weight);
	}
	/* What an audited policy would have dropped: the pod whose policy it is, and the policy. */
	if (event->kind == VELO_FLOW_AUDIT)
		flow_series_add_n(&flows->audits,
				  (const char *[]){ event->reason == VELO_FLOW_R_POLICY_INGRESS
							    ? entry->dst_pod
							    : entry->src_pod,
						    entry->policies,
						    velo_flow_reason_name(event->reason) },
				  weight);
	if (event->kind == VELO_FLOW_START || event->kind == VELO_FLOW_DROP ||
	    event->kind == VELO_FLOW_AUDIT)
		flow_series_add_n(&flows->pairs,
				  (const char *[]){ entry->src_pod, entry->dst_pod,
						    velo_flow_verdict(event->kind) },
				  weight);
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
	flows_name_pods(flows->pods, entry, flows->batch_now_ns);
	flows_name_policies(flows->policy, &flows->asked, entry);
	flows_name_service(flows->services, entry);
	flows_name_path(entry);
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
	       flow_series_expire(&flows->pairs, now_ns, SERIES_IDLE_NS) +
	       flow_series_expire(&flows->audits, now_ns, SERIES_IDLE_NS);
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
	flow_series_clock(&flows->audits, flows->batch_now_ns);
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

const struct flow_series *flows_audits(const struct flows *flows)
{
	return &flows->audits;
}
