// SPDX-License-Identifier: Apache-2.0
/* Links: look-ups, the veth pair's creation, up, down into a group, deletion. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <linux/ip.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <netlink/addr.h>
#include <netlink/msg.h>
#include <netlink/route/link.h>
#include <netlink/route/link/inet.h>
#include <netlink/route/link/veth.h>

#include "net/netlink.h"
#include "net/netlink_link.h"
#include "net/netlink_nladdr.h"

static void rtnl_linkp(struct rtnl_link **link)
{
	if (*link)
		rtnl_link_put(*link);
}

#define _cleanup_link_ __attribute__((cleanup(rtnl_linkp)))

static int link_get(struct nl_sock *sk, int ifindex, const char *name, struct velo_nl_link *out)
{
	_cleanup_link_ struct rtnl_link *link = NULL;
	struct nl_addr *mac;
	int ret;

	ret = velo_nl_errno(rtnl_link_get_kernel(sk, ifindex, name, &link));
	if (ret)
		return ret == -ENOENT ? -ENODEV : ret;
	memset(out, 0, sizeof(*out));
	out->ifindex = rtnl_link_get_ifindex(link);
	out->mtu = rtnl_link_get_mtu(link);
	out->flags = rtnl_link_get_flags(link);
	out->peer_ifindex = rtnl_link_get_link(link);
	out->group = rtnl_link_get_group(link);
	mac = rtnl_link_get_addr(link);
	if (mac && nl_addr_get_len(mac) == 6)
		velo_nl_mac_fmt(nl_addr_get_binary_addr(mac), out->mac);
	return 0;
}

int velo_nl_link_get(struct nl_sock *sk, const char *name, struct velo_nl_link *out)
{
	return link_get(sk, 0, name, out);
}

int velo_nl_link_get_index(struct nl_sock *sk, int ifindex, struct velo_nl_link *out)
{
	return link_get(sk, ifindex, NULL, out);
}

/*
 * A device ioctl on the netlink socket's fd: the kernel answers it in the
 * socket's netns from the device alone, where an RTM_GETLINK builds the
 * whole link and libnl parses it into an object.
 */
static int link_ioctl(struct nl_sock *sk, unsigned long request, const char *name,
		      struct ifreq *ifr)
{
	memset(ifr, 0, sizeof(*ifr));
	if (strlen(name) >= sizeof(ifr->ifr_name))
		return -EINVAL;
	memcpy(ifr->ifr_name, name, strlen(name));
	return ioctl(nl_socket_get_fd(sk), request, ifr) ? -errno : 0;
}

int velo_nl_link_index(struct nl_sock *sk, const char *name)
{
	struct ifreq ifr;
	int ret = link_ioctl(sk, SIOCGIFINDEX, name, &ifr);

	return ret ? ret : ifr.ifr_ifindex;
}

int velo_nl_link_mac(struct nl_sock *sk, const char *name, char mac[18])
{
	struct ifreq ifr;
	int ret = link_ioctl(sk, SIOCGIFHWADDR, name, &ifr);

	if (ret)
		return ret;
	if (ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER)
		velo_nl_mac_fmt((const uint8_t *)ifr.ifr_hwaddr.sa_data, mac);
	else
		mac[0] = '\0';
	return 0;
}

int velo_nl_link_mtu(struct nl_sock *sk, int ifindex)
{
	struct ifreq ifr = { .ifr_ifindex = ifindex };
	char name[IFNAMSIZ];
	int ret;

	if (ioctl(nl_socket_get_fd(sk), SIOCGIFNAME, &ifr))
		return -errno;
	memcpy(name, ifr.ifr_name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	ret = link_ioctl(sk, SIOCGIFMTU, name, &ifr);
	return ret ? ret : ifr.ifr_mtu;
}

int velo_nl_veth_add(struct nl_sock *sk, const char *name, const char *mac, unsigned mtu,
		     const char *peer_name, int peer_netns_fd)
{
	_cleanup_link_ struct rtnl_link *link = rtnl_link_veth_alloc();
	_cleanup_link_ struct rtnl_link *peer = NULL;
	_cleanup_nl_addr_ struct nl_addr *hwaddr = NULL;

	if (!link)
		return -ENOMEM;
	peer = rtnl_link_veth_get_peer(link);
	if (!peer)
		return -ENOMEM;
	rtnl_link_set_name(link, name);
	if (mac) {
		hwaddr = velo_nl_mac_build(mac);
		if (!hwaddr)
			return -errno;
		rtnl_link_set_addr(link, hwaddr);
	}
	rtnl_link_set_name(peer, peer_name);
	if (mtu) {
		rtnl_link_set_mtu(link, mtu);
		rtnl_link_set_mtu(peer, mtu);
	}
	if (peer_netns_fd >= 0)
		rtnl_link_set_ns_fd(peer, peer_netns_fd);
	return velo_nl_errno(rtnl_link_add(sk, link, NLM_F_CREATE | NLM_F_EXCL));
}

/* IFF_UP, and with ipv4_forwarding the device's forwarding and strict rp_filter, in one request. */
static int link_up(struct nl_sock *sk, int ifindex, bool ipv4_forwarding)
{
	_cleanup_link_ struct rtnl_link *link = rtnl_link_alloc();
	_cleanup_link_ struct rtnl_link *change = rtnl_link_alloc();
	int ret = 0;

	if (!link || !change)
		return -ENOMEM;
	rtnl_link_set_ifindex(link, ifindex);
	rtnl_link_set_flags(change, IFF_UP);
	if (ipv4_forwarding) {
		ret = rtnl_link_inet_set_conf(change, IPV4_DEVCONF_FORWARDING, 1);
		if (!ret)
			ret = rtnl_link_inet_set_conf(change, IPV4_DEVCONF_RP_FILTER, 1);
	}
	if (!ret)
		ret = rtnl_link_change(sk, link, change, 0);
	return velo_nl_errno(ret);
}

int velo_nl_link_up(struct nl_sock *sk, int ifindex)
{
	return link_up(sk, ifindex, false);
}

int velo_nl_link_up_forwarding(struct nl_sock *sk, int ifindex)
{
	return link_up(sk, ifindex, true);
}

int velo_nl_link_del(struct nl_sock *sk, const char *name)
{
	_cleanup_link_ struct rtnl_link *link = rtnl_link_alloc();
	int ret;

	if (!link)
		return -ENOMEM;
	rtnl_link_set_name(link, name);
	ret = velo_nl_errno(rtnl_link_delete(sk, link));
	return ret == -ENOENT ? -ENODEV : ret;
}

int velo_nl_link_del_index(struct nl_sock *sk, int ifindex)
{
	_cleanup_link_ struct rtnl_link *link = rtnl_link_alloc();
	int ret;

	if (!link)
		return -ENOMEM;
	rtnl_link_set_ifindex(link, ifindex);
	ret = velo_nl_errno(rtnl_link_delete(sk, link));
	return ret == -ENOENT ? -ENODEV : ret;
}

int velo_nl_link_down_group(struct nl_sock *sk, int ifindex, uint32_t group)
{
	_cleanup_link_ struct rtnl_link *link = rtnl_link_alloc();
	_cleanup_link_ struct rtnl_link *change = rtnl_link_alloc();

	if (!link || !change)
		return -ENOMEM;
	rtnl_link_set_ifindex(link, ifindex);
	rtnl_link_unset_flags(change, IFF_UP);
	rtnl_link_set_group(change, group);
	return velo_nl_errno(rtnl_link_change(sk, link, change, 0));
}

int velo_nl_group_del(struct nl_sock *sk, uint32_t group)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nl_msg *msg = nlmsg_alloc_simple(RTM_DELLINK, NLM_F_REQUEST | NLM_F_ACK);
	int ret;

	if (!msg)
		return -ENOMEM;
	ret = nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO);
	if (!ret)
		ret = nla_put_u32(msg, IFLA_GROUP, group);
	if (!ret)
		ret = nl_send_auto(sk, msg);
	if (ret >= 0)
		ret = nl_wait_for_ack(sk);
	nlmsg_free(msg);
	return velo_nl_errno(ret < 0 ? ret : 0);
}
