// SPDX-License-Identifier: Apache-2.0
/*
 * The uplink program's /metrics (uplink_xdp_metrics.h): its per-CPU counters
 * summed, and the device its pinned link is attached to.
 */
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/lib/velo_uplink.h"
#include "uplink_xdp.h"
#include "uplink_xdp_metrics.h"

char *uplink_xdp_metrics(const struct agent_config *config)
{
	static const char *const reasons[VELO_UPLINK_STAT_MAX] = {
		[VELO_UPLINK_PASS_NOT_HOST] = "not_host", [VELO_UPLINK_PASS_NOT_IP] = "not_ip",
		[VELO_UPLINK_PASS_NO_POD] = "no_xdp_pod", [VELO_UPLINK_PASS_TTL] = "ttl",
		[VELO_UPLINK_PASS_MTU] = "mtu",		  [VELO_UPLINK_PASS_CT] = "conntrack",
		[VELO_UPLINK_PASS_POLICY] = "policy",	  [VELO_UPLINK_PASS_TCP] = "tcp",
	};
	struct velo_uplink_counters sum[VELO_UPLINK_STAT_MAX] = {};
	struct velo_uplink_counters *values;
	char path[PATH_MAX], pin[PATH_MAX], device[IF_NAMESIZE] = "";
	int cpus = libbpf_num_possible_cpus(), fd, ifindex;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	if (snprintf(path, sizeof(path), "%s/%s", config->paths.bpffs_dir, VELO_MAP_UPLINK_STATS) >=
		    (int)sizeof(path) ||
	    uplink_xdp_pin_path(&config->paths, false, pin, sizeof(pin)) || cpus <= 0)
		return NULL;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return NULL;
	values = calloc((size_t)cpus, sizeof(*values));
	for (__u32 key = 0; values && key < VELO_UPLINK_STAT_MAX; key++) {
		if (bpf_map_lookup_elem(fd, &key, values))
			continue;
		for (int cpu = 0; cpu < cpus; cpu++) {
			sum[key].packets += values[cpu].packets;
			sum[key].bytes += values[cpu].bytes;
		}
	}
	free(values);
	close(fd);
	ifindex = uplink_xdp_pinned_ifindex(pin);
	if (ifindex > 0 && !if_indextoname((unsigned)ifindex, device))
		device[0] = '\0';
	for (char *c = device; *c; c++)
		if (*c == '"' || *c == '\\')
			*c = '_'; /* a label value can't hold them unescaped */
	out = open_memstream(&text, &len);
	if (!out)
		return NULL;
	fprintf(out,
		"# HELP velo_uplink_xdp_attached Whether velo_xdp_uplink is attached (device).\n"
		"# TYPE velo_uplink_xdp_attached gauge\n");
	fprintf(out, "velo_uplink_xdp_attached{device=\"%s\"} %d\n", device, device[0] != '\0');
	fprintf(out,
		"# HELP velo_uplink_xdp_redirect_packets_total Frames from the uplink "
		"redirected into a local pod's veth by XDP.\n"
		"# TYPE velo_uplink_xdp_redirect_packets_total counter\n"
		"velo_uplink_xdp_redirect_packets_total %llu\n",
		(unsigned long long)sum[VELO_UPLINK_REDIRECT].packets);
	fprintf(out,
		"# HELP velo_uplink_xdp_redirect_bytes_total Bytes (Ethernet frames) of those.\n"
		"# TYPE velo_uplink_xdp_redirect_bytes_total counter\n"
		"velo_uplink_xdp_redirect_bytes_total %llu\n",
		(unsigned long long)sum[VELO_UPLINK_REDIRECT].bytes);
	fprintf(out, "# HELP velo_uplink_xdp_pass_packets_total Frames the uplink program left to "
		     "the stack, by reason.\n"
		     "# TYPE velo_uplink_xdp_pass_packets_total counter\n");
	for (unsigned i = VELO_UPLINK_REDIRECT + 1; i < VELO_UPLINK_STAT_MAX; i++)
		fprintf(out, "velo_uplink_xdp_pass_packets_total{reason=\"%s\"} %llu\n", reasons[i],
			(unsigned long long)sum[i].packets);
	if (fclose(out)) {
		free(text);
		return NULL;
	}
	return text;
}
