// SPDX-License-Identifier: Apache-2.0
/* A pod's entries in the endpoint map (velo_endpoints): keyed by address, owned by its sandbox. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <bpf/bpf.h>

#include "base/log.h"
#include "base/naming.h"
#include "datapath/endpoint_map.h"

uint64_t velo_endpoint_owner(const struct velo_record *record)
{
	return velo_fnv1a64(record->container_id, strlen(record->container_id));
}

static int mac_parse(const char *text, __u8 mac[6])
{
	unsigned v[6];

	if (sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (__u8)v[i];
	return 0;
}

/* velo_ip holds IPv4 in addr[0..3]; the map key is IPv4-mapped IPv6. */
void velo_ep_key(const struct velo_ip *ip, struct velo_ep_key *key)
{
	memset(key, 0, sizeof(*key));
	if (ip->family == AF_INET) {
		key->addr[10] = 0xff;
		key->addr[11] = 0xff;
		memcpy(&key->addr[12], ip->addr, 4);
	} else {
		memcpy(key->addr, ip->addr, 16);
	}
}

/* Entries written by this owner are removed by this owner only. */
void velo_endpoints_remove(int map_fd, const struct velo_record *record, uint64_t owner)
{
	for (unsigned i = 0; i < record->n_ips; i++) {
		struct velo_endpoint ep;
		struct velo_ep_key key;

		velo_ep_key(&record->ips[i], &key);
		if (bpf_map_lookup_elem(map_fd, &key, &ep) || ep.owner != owner)
			continue;
		if (bpf_map_delete_elem(map_fd, &key) && errno != ENOENT)
			pr_warn("fastpath: remove endpoint entry: %s", strerror(errno));
	}
}

int velo_endpoints_write(int map_fd, const struct velo_record *record, bool xdp)
{
	uint64_t owner = velo_endpoint_owner(record);
	struct velo_endpoint ep = {
		.owner = owner,
		.ifindex = (__u32)record->host_ifindex,
		.flags = VELO_EP_F_FASTPATH | (xdp ? VELO_EP_F_XDP_RX : 0),
	};

	if (mac_parse(record->pod_mac, ep.pod_mac) || mac_parse(record->host_mac, ep.host_mac))
		return -EINVAL;
	for (unsigned i = 0; i < record->n_ips; i++) {
		struct velo_ep_key key;

		velo_ep_key(&record->ips[i], &key);
		/* A stale entry of an older sandbox with this IP is replaced: the IP is ours now. */
		if (bpf_map_update_elem(map_fd, &key, &ep, BPF_ANY)) {
			int ret = -errno;

			velo_endpoints_remove(map_fd, record, owner);
			return ret;
		}
	}
	return 0;
}
