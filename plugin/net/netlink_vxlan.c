// SPDX-License-Identifier: Apache-2.0
/* VXLAN devices, their FDB entries and neighbour deletion over libnl (netlink_vxlan.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/neighbour.h>
#include <sys/socket.h>
#include <netlink/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/vxlan.h>
#include <netlink/route/neighbour.h>

#include "net/netlink.h"
#include "net/netlink_nladdr.h"
#include "net/netlink_vxlan.h"

static void vxlan_linkp(struct rtnl_link **link)
{
	if (*link)
		rtnl_link_put(*link);
}

static void vxlan_neighp(struct rtnl_neigh **neigh)
{
	if (*neigh)
		rtnl_neigh_put(*neigh);
}

#define _cleanup_vxlan_link_ __attribute__((cleanup(vxlan_linkp)))
#define _cleanup_vxlan_neigh_ __attribute__((cleanup(vxlan_neighp)))

int velo_nl_vxlan_get(struct nl_sock *sk, const char *name, struct velo_nl_vxlan *vxlan)
{
	_cleanup_vxlan_link_ struct rtnl_link *link = NULL;
	_cleanup_nl_addr_ struct nl_addr *local = NULL;
	struct nl_addr *mac;
	uint32_t value;
	int ret;

	ret = velo_nl_errno(rtnl_link_get_kernel(sk, 0, name, &link));
	if (ret)
		return ret == -ENOENT ? -ENODEV : ret;
	if (!rtnl_link_is_vxlan(link))
		return -EMEDIUMTYPE;
	memset(vxlan, 0, sizeof(*vxlan));
	snprintf(vxlan->name, sizeof(vxlan->name), "%s", name);
	vxlan->ifindex = rtnl_link_get_ifindex(link);
	vxlan->flags = rtnl_link_get_flags(link);
	vxlan->mtu = rtnl_link_get_mtu(link);
	if (!rtnl_link_vxlan_get_id(link, &value))
		vxlan->vni = value;
	if (!rtnl_link_vxlan_get_port(link, &value))
		vxlan->port = (uint16_t)value;
	vxlan->learning = rtnl_link_vxlan_get_learning(link) > 0;
	if (!rtnl_link_vxlan_get_local(link, &local) && local &&
	    velo_nl_addr_len(nl_addr_get_family(local)) == nl_addr_get_len(local)) {
		vxlan->local_family = nl_addr_get_family(local);
		memcpy(vxlan->local, nl_addr_get_binary_addr(local), nl_addr_get_len(local));
	}
	mac = rtnl_link_get_addr(link);
	if (mac && nl_addr_get_len(mac) == 6)
		velo_nl_mac_fmt(nl_addr_get_binary_addr(mac), vxlan->mac);
	return 0;
}

int velo_nl_vxlan_add(struct nl_sock *sk, const struct velo_nl_vxlan *vxlan)
{
	_cleanup_vxlan_link_ struct rtnl_link *link = rtnl_link_vxlan_alloc();
	_cleanup_nl_addr_ struct nl_addr *local = NULL;
	_cleanup_nl_addr_ struct nl_addr *mac = NULL;
	int ret;

	if (!link)
		return -ENOMEM;
	local = velo_nl_ip_build(vxlan->local_family, vxlan->local,
				 velo_nl_addr_len(vxlan->local_family) * 8);
	if (!local)
		return -errno;
	mac = velo_nl_mac_build(vxlan->mac);
	if (!mac)
		return -errno;
	rtnl_link_set_name(link, vxlan->name);
	rtnl_link_set_addr(link, mac);
	if (vxlan->mtu)
		rtnl_link_set_mtu(link, vxlan->mtu);
	ret = velo_nl_errno(rtnl_link_vxlan_set_id(link, vxlan->vni));
	if (!ret)
		ret = velo_nl_errno(rtnl_link_vxlan_set_local(link, local));
	if (!ret)
		ret = velo_nl_errno(rtnl_link_vxlan_set_port(link, vxlan->port));
	if (!ret)
		ret = velo_nl_errno(rtnl_link_vxlan_set_learning(link, vxlan->learning));
	if (ret)
		return ret;
	return velo_nl_errno(rtnl_link_add(sk, link, NLM_F_CREATE | NLM_F_EXCL));
}

/* fdb as libnl's neighbour object of family AF_BRIDGE; NULL with errno on failure. */
static struct rtnl_neigh *fdb_build(const struct velo_nl_fdb *fdb)
{
	struct rtnl_neigh *neigh = rtnl_neigh_alloc();
	_cleanup_nl_addr_ struct nl_addr *lladdr = NULL;
	_cleanup_nl_addr_ struct nl_addr *dst = NULL;
	int ret;

	if (!neigh) {
		errno = ENOMEM;
		return NULL;
	}
	lladdr = velo_nl_mac_build(fdb->mac);
	if (!lladdr)
		goto err;
	rtnl_neigh_set_ifindex(neigh, fdb->ifindex);
	rtnl_neigh_set_lladdr(neigh, lladdr);
	if (fdb->dst_family) {
		dst = velo_nl_ip_build(fdb->dst_family, fdb->dst,
				       velo_nl_addr_len(fdb->dst_family) * 8);
		if (!dst)
			goto err;
		ret = velo_nl_errno(rtnl_neigh_set_dst(neigh, dst));
		if (ret) {
			errno = -ret;
			goto err;
		}
	}
	/* After the dst: libnl takes a neighbour's family from its dst unless one is set. */
	rtnl_neigh_set_family(neigh, AF_BRIDGE);
	rtnl_neigh_set_flags(neigh, NTF_SELF);
	rtnl_neigh_set_state(neigh, NUD_PERMANENT);
	return neigh;
err:
	rtnl_neigh_put(neigh);
	return NULL;
}

int velo_nl_fdb_replace(struct nl_sock *sk, const struct velo_nl_fdb *fdb)
{
	_cleanup_vxlan_neigh_ struct rtnl_neigh *neigh = fdb_build(fdb);

	if (!neigh)
		return -errno;
	return velo_nl_errno(rtnl_neigh_add(sk, neigh, NLM_F_CREATE | NLM_F_REPLACE));
}

int velo_nl_fdb_del(struct nl_sock *sk, const struct velo_nl_fdb *fdb)
{
	_cleanup_vxlan_neigh_ struct rtnl_neigh *neigh = fdb_build(fdb);

	if (!neigh)
		return -errno;
	return velo_nl_errno(rtnl_neigh_delete(sk, neigh, 0));
}
