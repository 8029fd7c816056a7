// SPDX-License-Identifier: Apache-2.0
/*
 * The cross-node tc shortcut's /metrics (uplink_tc_metrics.h): both halves'
 * per-CPU counters summed (velo_cross_v1), the device the receiving half runs
 * on and how many remote pod CIDRs the map holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/lib/velo_cross.h"
#include "datapath/pins.h"
#include "uplink_tc.h"
#include "uplink_tc_metrics.h"

/* Per outcome: the direction and reason labels; redirects and drops have series of their own. */
static const struct {
	const char *direction, *reason;
} outcomes[VELO_CROSS_STAT_MAX] = {
	[VELO_CROSS_TX_REDIRECT] = { "send", NULL },
	[VELO_CROSS_TX_NEIGH] = { "send", "neigh" },
	[VELO_CROSS_TX_PASS_CT] = { "send", "conntrack" },
	[VELO_CROSS_TX_PASS_PENDING] = { "send", "pending" },
	[VELO_CROSS_TX_PASS_MTU] = { "send", "mtu" },
	[VELO_CROSS_RX_REDIRECT] = { "receive", NULL },
	[VELO_CROSS_RX_PASS_NOT_IP] = { "receive", "not_ip" },
	[VELO_CROSS_RX_PASS_NOT_REMOTE] = { "receive", "not_remote" },
	[VELO_CROSS_RX_PASS_NO_POD] = { "receive", "no_tc_pod" },
	[VELO_CROSS_RX_PASS_TTL] = { "receive", "ttl" },
	[VELO_CROSS_RX_PASS_CT] = { "receive", "conntrack" },
	[VELO_CROSS_RX_PASS_PENDING] = { "receive", "pending" },
	[VELO_CROSS_RX_PASS_MTU] = { "receive", "mtu" },
	[VELO_CROSS_RX_DROP_POLICY] = { "receive", "policy" },
};

static void counters_sum(int fd, struct velo_cross_counters sum[VELO_CROSS_STAT_MAX])
{
	int cpus = libbpf_num_possible_cpus();
	struct velo_cross_counters *values =
		cpus > 0 ? calloc((size_t)cpus, sizeof(*values)) : NULL;

	for (__u32 key = 0; values && key < VELO_CROSS_STAT_MAX; key++) {
		if (bpf_map_lookup_elem(fd, &key, values))
			continue;
		for (int cpu = 0; cpu < cpus; cpu++) {
			sum[key].packets += values[cpu].packets;
			sum[key].bytes += values[cpu].bytes;
		}
	}
	free(values);
}

static unsigned remote_cidrs(const struct agent_config *config)
{
	struct velo_remote_key key, next;
	int fd = velo_map_pin_open(&config->paths, VELO_MAP_REMOTE);
	unsigned n = 0;

	if (fd < 0)
		return 0;
	for (bool first = true; !bpf_map_get_next_key(fd, first ? NULL : &key, &next);
	     first = false) {
		key = next;
		n++;
	}
	close(fd);
	return n;
}

char *uplink_tc_metrics(const struct agent_config *config)
{
	struct velo_cross_counters sum[VELO_CROSS_STAT_MAX] = {};
	const char *device = uplink_tc_device();
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	int fd;

	if (!config->cross_node_tc)
		return NULL;
	fd = velo_map_pin_open(&config->paths, VELO_MAP_CROSS_STATS);
	if (fd >= 0) {
		counters_sum(fd, sum);
		close(fd);
	}
	out = open_memstream(&text, &len);
	if (!out)
		return NULL;
	fprintf(out,
		"# HELP velo_cross_node_attached Whether velo_tc_uplink runs on the uplink (device).\n"
		"# TYPE velo_cross_node_attached gauge\n"
		"velo_cross_node_attached{device=\"%s\"} %d\n",
		device, device[0] != '\0');
	fprintf(out,
		"# HELP velo_cross_node_remote_cidrs Other nodes' pod CIDRs the shortcut takes.\n"
		"# TYPE velo_cross_node_remote_cidrs gauge\n"
		"velo_cross_node_remote_cidrs %u\n",
		remote_cidrs(config));
	fprintf(out,
		"# HELP velo_cross_node_redirect_packets_total Packets the cross-node shortcut "
		"carried past this node's routing: sent to the uplink, received into a pod.\n"
		"# TYPE velo_cross_node_redirect_packets_total counter\n");
	for (unsigned i = 0; i < VELO_CROSS_STAT_MAX; i++)
		if (!outcomes[i].reason)
			fprintf(out,
				"velo_cross_node_redirect_packets_total{direction=\"%s\"} %llu\n",
				outcomes[i].direction, (unsigned long long)sum[i].packets);
	fprintf(out, "# HELP velo_cross_node_redirect_bytes_total Bytes (skb length) of those.\n"
		     "# TYPE velo_cross_node_redirect_bytes_total counter\n");
	for (unsigned i = 0; i < VELO_CROSS_STAT_MAX; i++)
		if (!outcomes[i].reason)
			fprintf(out,
				"velo_cross_node_redirect_bytes_total{direction=\"%s\"} %llu\n",
				outcomes[i].direction, (unsigned long long)sum[i].bytes);
	fprintf(out, "# HELP velo_cross_node_pass_packets_total Packets a half looked at and left "
		     "to the stack, by reason.\n"
		     "# TYPE velo_cross_node_pass_packets_total counter\n");
	for (unsigned i = 0; i < VELO_CROSS_STAT_MAX; i++)
		if (outcomes[i].reason && i != VELO_CROSS_RX_DROP_POLICY &&
		    i != VELO_CROSS_TX_NEIGH)
			fprintf(out,
				"velo_cross_node_pass_packets_total{direction=\"%s\",reason=\"%s\"} "
				"%llu\n",
				outcomes[i].direction, outcomes[i].reason,
				(unsigned long long)sum[i].packets);
	fprintf(out,
		"# HELP velo_cross_node_send_neigh_packets_total Of the packets sent, those whose "
		"next hop the neighbour subsystem found (the route not by the uplink, or its MAC not "
		"known yet); the others took the route lookup's MACs.\n"
		"# TYPE velo_cross_node_send_neigh_packets_total counter\n"
		"velo_cross_node_send_neigh_packets_total %llu\n",
		(unsigned long long)sum[VELO_CROSS_TX_NEIGH].packets);
	fprintf(out,
		"# HELP velo_cross_node_drop_packets_total Packets the receiving half dropped: the "
		"pod's NetworkPolicy denies them.\n"
		"# TYPE velo_cross_node_drop_packets_total counter\n"
		"velo_cross_node_drop_packets_total{reason=\"policy\"} %llu\n",
		(unsigned long long)sum[VELO_CROSS_RX_DROP_POLICY].packets);
	if (fclose(out)) {
		free(text);
		return NULL;
	}
	return text;
}
