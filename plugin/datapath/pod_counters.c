// SPDX-License-Identifier: Apache-2.0
/* Per-pod counters from the pinned per-CPU maps, summed over CPUs. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/lib/velo_shared.h"
#include "bpf/lib/velo_sockmap.h"
#include "datapath/loader.h"
#include "datapath/pod_counters.h"
#include "datapath/sockmap_bpf.h"

int velo_percpu_u64_sum(int map_fd, uint32_t key, uint64_t *sum)
{
	int cpus = libbpf_num_possible_cpus(), ret;
	__u64 *values;

	if (cpus <= 0)
		return cpus ? cpus : -EINVAL;
	values = calloc((size_t)cpus, sizeof(*values));
	if (!values)
		return -ENOMEM;
	ret = bpf_map_lookup_elem(map_fd, &key, values) ? -errno : 0;
	*sum = 0;
	for (int cpu = 0; !ret && cpu < cpus; cpu++)
		*sum += values[cpu];
	free(values);
	return ret;
}

int velo_counter_maps_open(const struct velo_paths *paths, struct velo_counter_maps *maps)
{
	size_t largest = sizeof(struct velo_cg_counters);

	if (sizeof(struct velo_sm_counters) > largest)
		largest = sizeof(struct velo_sm_counters);
	maps->cpus = libbpf_num_possible_cpus();
	if (maps->cpus <= 0)
		return maps->cpus ? maps->cpus : -EINVAL;
	/* Per-CPU values are 8-byte aligned in the syscall buffer; these sizes already are. */
	maps->values = calloc((size_t)maps->cpus, largest);
	if (!maps->values)
		return -ENOMEM;
	maps->cgroup_fd = velo_map_pin_open(paths, VELO_MAP_CG_COUNTERS);
	maps->xdp_fd = velo_map_pin_open(paths, VELO_MAP_DST_STATS);
	maps->sm_pods_fd = velo_map_pin_open(paths, VELO_MAP_SM_PODS);
	maps->sm_acct_fd = velo_map_pin_open(paths, VELO_MAP_SM_ACCT);
	return 0;
}

void velo_counter_maps_close(struct velo_counter_maps *maps)
{
	int *fds[] = { &maps->cgroup_fd, &maps->xdp_fd, &maps->sm_pods_fd, &maps->sm_acct_fd };

	for (unsigned i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	free(maps->values);
	maps->values = NULL;
}

static void read_cgroup(const struct velo_counter_maps *maps, const struct velo_record *record,
			struct velo_pod_counters *out)
{
	const struct velo_cg_counters *per_cpu = maps->values;
	__u64 key = record->cgroup_id;

	/* The storage lives while one of velo's programs is attached to that cgroup. */
	if (maps->cgroup_fd < 0 || !key || bpf_map_lookup_elem(maps->cgroup_fd, &key, maps->values))
		return;
	out->has_cgroup = true;
	for (int cpu = 0; cpu < maps->cpus; cpu++) {
		out->rx_packets += per_cpu[cpu].rx_packets;
		out->rx_bytes += per_cpu[cpu].rx_bytes;
		out->tx_packets += per_cpu[cpu].tx_packets;
		out->tx_bytes += per_cpu[cpu].tx_bytes;
		out->deny_packets += per_cpu[cpu].deny_packets;
		out->deny_bytes += per_cpu[cpu].deny_bytes;
	}
}

static void read_xdp(const struct velo_counter_maps *maps, const struct velo_record *record,
		     struct velo_pod_counters *out)
{
	const struct velo_dst_counters *per_cpu = maps->values;
	__u32 key = (__u32)record->host_ifindex;

	if (maps->xdp_fd < 0 || record->host_ifindex <= 0 ||
	    bpf_map_lookup_elem(maps->xdp_fd, &key, maps->values))
		return;
	out->has_xdp = true;
	for (int cpu = 0; cpu < maps->cpus; cpu++) {
		out->xdp_packets += per_cpu[cpu].packets;
		out->xdp_bytes += per_cpu[cpu].bytes;
	}
}

/* The sockmap side keys pods by netns cookie, found through any of the pod's addresses. */
static void read_sockmap(const struct velo_counter_maps *maps, const struct velo_record *record,
			 struct velo_pod_counters *out)
{
	const struct velo_sm_counters *per_cpu = maps->values;
	struct velo_sm_pod pod;

	if (maps->sm_pods_fd < 0 || maps->sm_acct_fd < 0)
		return;
	for (unsigned i = 0; i < record->n_ips; i++) {
		struct velo_sm_addr addr;

		velo_sockmap_pod_key(&record->ips[i], &addr);
		if (bpf_map_lookup_elem(maps->sm_pods_fd, &addr, &pod))
			continue;
		if (bpf_map_lookup_elem(maps->sm_acct_fd, &pod.netns_cookie, maps->values))
			return;
		out->has_sockmap = true;
		for (int cpu = 0; cpu < maps->cpus; cpu++) {
			out->sockmap_tx_bytes += per_cpu[cpu].tx_bytes;
			out->sockmap_rx_bytes += per_cpu[cpu].rx_bytes;
		}
		return;
	}
}

void velo_pod_counters_read(const struct velo_counter_maps *maps, const struct velo_record *record,
			    struct velo_pod_counters *out)
{
	memset(out, 0, sizeof(*out));
	read_cgroup(maps, record, out);
	read_xdp(maps, record, out);
	read_sockmap(maps, record, out);
}
