// SPDX-License-Identifier: Apache-2.0
/* The VXLAN devices and their VTEP MACs (vxlan_device.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/if_addr.h>
#include <net/if.h>

#include "base/log.h"
#include "net/netlink.h"
#include "net/netlink_dump.h"
#include "net/netlink_ip.h"
#include "net/netlink_link.h"
#include "net/netlink_vxlan.h"
#include "net/wiring_sysctl.h"
#include "agent/config.h"
#include "routing_nodes.h"
#include "vxlan_device.h"

const char *vxlan_device_name(int underlay_family)
{
	return underlay_family == AF_INET ? VXLAN_DEVICE4 : VXLAN_DEVICE6;
}

void vxlan_vtep_mac(const struct velo_cidr *addr, char mac[18])
{
	uint64_t hash = 0xcbf29ce484222325ull; /* FNV-1a's offset basis */
	const uint8_t *a = addr->addr;

	if (addr->family == AF_INET) {
		snprintf(mac, 18, "02:76:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3]);
		return;
	}
	for (unsigned i = 0; i < 16; i++) {
		hash ^= a[i];
		hash *= 0x100000001b3ull; /* FNV's 64-bit prime */
	}
	snprintf(mac, 18, "06:%02x:%02x:%02x:%02x:%02x", (unsigned)(hash >> 56) & 0xff,
		 (unsigned)(hash >> 48) & 0xff, (unsigned)(hash >> 40) & 0xff,
		 (unsigned)(hash >> 32) & 0xff, (unsigned)(hash >> 24) & 0xff);
}

struct holder_scan {
	const struct velo_cidr *addr;
	int ifindex;
};

static int find_holder(const struct velo_nl_addr *addr, void *arg)
{
	struct holder_scan *scan = arg;

	if (addr->family == scan->addr->family &&
	    !memcmp(addr->addr, scan->addr->addr, velo_nl_addr_len(addr->family)))
		scan->ifindex = addr->ifindex;
	return 0;
}

/* The MTU the device gets: that of the device holding local, less the encapsulation. */
static int wanted_mtu(struct nl_sock *sk, const struct velo_cidr *local, unsigned *mtu)
{
	struct holder_scan scan = { .addr = local };
	unsigned overhead = local->family == AF_INET ? VXLAN_OVERHEAD4 : VXLAN_OVERHEAD6;
	int ret, link_mtu;

	ret = velo_nl_addr_dump(sk, local->family, find_holder, &scan);
	if (ret)
		return ret;
	if (!scan.ifindex)
		return -EADDRNOTAVAIL; /* the InternalIP is not this node's */
	link_mtu = velo_nl_link_mtu(sk, scan.ifindex);
	if (link_mtu < 0)
		return link_mtu;
	if ((unsigned)link_mtu < overhead + 68)
		return -EMSGSIZE;
	*mtu = (unsigned)link_mtu - overhead;
	return 0;
}

static bool same(const struct velo_nl_vxlan *have, const struct velo_nl_vxlan *want)
{
	return have->vni == want->vni && have->port == want->port && !have->learning &&
	       have->local_family == want->local_family &&
	       !memcmp(have->local, want->local, velo_nl_addr_len(want->local_family)) &&
	       !strcmp(have->mac, want->mac) && have->mtu == want->mtu;
}

/* Whether addr is one of self's pod CIDRs' network addresses, as the device holds them. */
static bool cidr_address(const struct node *self, const struct velo_nl_addr *addr)
{
	for (unsigned c = 0; c < self->n_cidrs; c++)
		if (self->cidrs[c].family == addr->family &&
		    addr->prefix == velo_nl_addr_len(addr->family) * 8 &&
		    !memcmp(self->cidrs[c].addr, addr->addr, velo_nl_addr_len(addr->family)))
			return true;
	return false;
}

struct stale_addrs {
	const struct node *self;
	int ifindex;
	unsigned n;
	struct velo_nl_addr addrs[8];
};

static int collect_stale_addr(const struct velo_nl_addr *addr, void *arg)
{
	struct stale_addrs *scan = arg;
	bool link_local =
		addr->family == AF_INET6 && addr->addr[0] == 0xfe && (addr->addr[1] & 0xc0) == 0x80;

	if (addr->ifindex == scan->ifindex && !link_local && !cidr_address(scan->self, addr) &&
	    scan->n < sizeof(scan->addrs) / sizeof(scan->addrs[0]))
		scan->addrs[scan->n++] = *addr;
	return 0;
}

/*
 * This node's pod CIDRs' network addresses on the device, and no other (a CIDR the node no
 * longer has may be another node's gateway now); ones already there stay.
 */
static void sync_cidr_addresses(struct nl_sock *sk, const struct node *self, int ifindex)
{
	struct stale_addrs scan = { .self = self, .ifindex = ifindex };
	char text[INET6_ADDRSTRLEN];
	int ret;

	for (unsigned c = 0; c < self->n_cidrs; c++) {
		const struct velo_cidr *cidr = &self->cidrs[c];
		struct velo_nl_addr addr = {
			.family = cidr->family,
			.ifindex = ifindex,
			.prefix = (uint8_t)(velo_nl_addr_len(cidr->family) * 8),
			.flags = cidr->family == AF_INET6 ? IFA_F_NODAD : 0,
		};

		memcpy(addr.addr, cidr->addr, sizeof(addr.addr));
		ret = velo_nl_addr_add(sk, &addr);
		if (ret && ret != -EEXIST)
			pr_warn("vxlan: address %s on device %d: %s",
				inet_ntop(cidr->family, cidr->addr, text, sizeof(text)), ifindex,
				strerror(-ret));
	}
	if (velo_nl_addr_dump(sk, AF_UNSPEC, collect_stale_addr, &scan))
		return;
	for (unsigned i = 0; i < scan.n; i++) {
		ret = velo_nl_addr_del(sk, &scan.addrs[i]);
		pr_info("vxlan: removed address %s from device %d (not this node's pod CIDR)%s",
			inet_ntop(scan.addrs[i].family, scan.addrs[i].addr, text, sizeof(text)),
			ifindex, ret && ret != -EADDRNOTAVAIL ? ": failed" : "");
	}
}

int vxlan_device_ensure(struct nl_sock *sk, const struct agent_config *config,
			const struct node *self, int underlay_family)
{
	const struct velo_cidr *local = routing_nodes_address(self, underlay_family);
	struct velo_nl_vxlan want = { .vni = VXLAN_VNI, .local_family = underlay_family };
	struct velo_nl_vxlan have;
	int ret;

	if (!local)
		return -EADDRNOTAVAIL;
	snprintf(want.name, sizeof(want.name), "%s", vxlan_device_name(underlay_family));
	want.port = (uint16_t)config->vxlan_port;
	memcpy(want.local, local->addr, sizeof(want.local));
	vxlan_vtep_mac(local, want.mac);
	ret = wanted_mtu(sk, local, &want.mtu);
	if (ret)
		return ret;
	ret = velo_nl_vxlan_get(sk, want.name, &have);
	if (ret == -EMEDIUMTYPE) {
		pr_err("vxlan: %s exists and is not a VXLAN device: left alone", want.name);
		return ret;
	}
	if (!ret && !same(&have, &want)) {
		pr_info("vxlan: %s differs from this node's settings (address, port, MAC or MTU): "
			"made again",
			want.name);
		ret = velo_nl_link_del(sk, want.name);
		if (ret && ret != -ENODEV)
			return ret;
		ret = -ENODEV;
	}
	if (ret == -ENODEV) {
		ret = velo_nl_vxlan_add(sk, &want);
		if (ret)
			return ret;
		ret = velo_nl_vxlan_get(sk, want.name, &have);
		pr_info("vxlan: %s created (port %u, MAC %s, MTU %u)", want.name, want.port,
			want.mac, want.mtu);
	}
	if (ret)
		return ret;
	/* Packets decapsulated here are forwarded on to pods. */
	ret = velo_nl_link_up_forwarding(sk, have.ifindex);
	if (ret)
		return ret;
	ret = wiring_dev_sysctl_write(6, want.name, "force_forwarding", "1");
	/* IPv6 before 6.17 has no force_forwarding: the node's own all.forwarding decides. */
	if (ret && ret != -ENOENT)
		pr_warn("vxlan: IPv6 forwarding on %s: %s", want.name, strerror(-ret));
	/*
	 * Loose reverse path: a NodePort reply comes back through the tunnel with
	 * the other node's address, which this node routes out of its uplink
	 * (the request left that way); strict, the kernel would drop it.
	 */
	ret = wiring_dev_sysctl_write(4, want.name, "rp_filter", "2");
	if (ret)
		pr_warn("vxlan: loose rp_filter on %s: %s", want.name, strerror(-ret));
	sync_cidr_addresses(sk, self, have.ifindex);
	return have.ifindex;
}

void vxlan_devices_remove(struct nl_sock *sk)
{
	static const int families[] = { AF_INET, AF_INET6 };

	for (unsigned i = 0; i < 2; i++) {
		int ret = velo_nl_link_del(sk, vxlan_device_name(families[i]));

		if (!ret)
			pr_info("vxlan: %s removed (routingMode has no tunnel)",
				vxlan_device_name(families[i]));
		else if (ret != -ENODEV)
			pr_warn("vxlan: remove %s: %s", vxlan_device_name(families[i]),
				strerror(-ret));
	}
}
