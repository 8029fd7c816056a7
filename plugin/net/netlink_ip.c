// SPDX-License-Identifier: Apache-2.0
/* Addresses, routes and neighbours written as libnl objects. */
#include <errno.h>

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/addr.h>
#include <netlink/route/addr.h>
#include <netlink/route/neighbour.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/route.h>

#include "net/netlink.h"
#include "net/netlink_ip.h"
#include "net/netlink_nladdr.h"

static void rtnl_addrp(struct rtnl_addr **addr)
{
	if (*addr)
		rtnl_addr_put(*addr);
}

static void rtnl_routep(struct rtnl_route **route)
{
	if (*route)
		rtnl_route_put(*route);
}

static void rtnl_neighp(struct rtnl_neigh **neigh)
{
	if (*neigh)
		rtnl_neigh_put(*neigh);
}

#define _cleanup_rtnl_addr_ __attribute__((cleanup(rtnl_addrp)))
#define _cleanup_route_ __attribute__((cleanup(rtnl_routep)))
#define _cleanup_neigh_ __attribute__((cleanup(rtnl_neighp)))

/* An address object for addr (its local address, prefix, ifindex); NULL with errno. */
static struct rtnl_addr *addr_build(const struct velo_nl_addr *addr)
{
	_cleanup_nl_addr_ struct nl_addr *local = NULL;
	struct rtnl_addr *rtnl_addr = rtnl_addr_alloc();
	int ret;

	if (!rtnl_addr) {
		errno = ENOMEM;
		return NULL;
	}
	local = velo_nl_ip_build(addr->family, addr->addr, addr->prefix);
	ret = local ? velo_nl_errno(rtnl_addr_set_local(rtnl_addr, local)) : -errno;
	if (ret) {
		rtnl_addr_put(rtnl_addr);
		errno = -ret;
		return NULL;
	}
	rtnl_addr_set_ifindex(rtnl_addr, addr->ifindex);
	rtnl_addr_set_prefixlen(rtnl_addr, addr->prefix);
	return rtnl_addr;
}

int velo_nl_addr_add(struct nl_sock *sk, const struct velo_nl_addr *addr)
{
	_cleanup_rtnl_addr_ struct rtnl_addr *rtnl_addr = addr_build(addr);

	if (!rtnl_addr)
		return -errno;
	rtnl_addr_set_flags(rtnl_addr, addr->flags);
	return velo_nl_errno(rtnl_addr_add(sk, rtnl_addr, NLM_F_EXCL));
}

int velo_nl_addr_del(struct nl_sock *sk, const struct velo_nl_addr *addr)
{
	_cleanup_rtnl_addr_ struct rtnl_addr *rtnl_addr = addr_build(addr);

	if (!rtnl_addr)
		return -errno;
	return velo_nl_errno(rtnl_addr_delete(sk, rtnl_addr, 0));
}

/* route as a libnl object (one nexthop); NULL with errno on failure. */
static struct rtnl_route *route_build(const struct velo_nl_route *route)
{
	struct rtnl_route *rtnl_route = rtnl_route_alloc();
	_cleanup_nl_addr_ struct nl_addr *dst = NULL;
	_cleanup_nl_addr_ struct nl_addr *gateway = NULL;
	struct rtnl_nexthop *nexthop;
	int ret;

	if (!rtnl_route) {
		errno = ENOMEM;
		return NULL;
	}
	dst = velo_nl_ip_build(route->family, route->dst, route->dst_len);
	if (!dst)
		goto err;
	rtnl_route_set_family(rtnl_route, route->family);
	ret = velo_nl_errno(rtnl_route_set_dst(rtnl_route, dst));
	if (ret) {
		errno = -ret;
		goto err;
	}
	rtnl_route_set_table(rtnl_route, route->table ? route->table : RT_TABLE_MAIN);
	rtnl_route_set_protocol(rtnl_route, route->protocol);
	rtnl_route_set_scope(rtnl_route, route->scope);
	rtnl_route_set_type(rtnl_route, RTN_UNICAST);
	/* Older libnl takes a single nexthop's flags only from the route. */
	if (route->flags)
		rtnl_route_set_flags(rtnl_route, route->flags);

	nexthop = rtnl_route_nh_alloc();
	if (!nexthop) {
		errno = ENOMEM;
		goto err;
	}
	if (route->oif)
		rtnl_route_nh_set_ifindex(nexthop, route->oif);
	if (route->has_gateway) {
		gateway = velo_nl_ip_build(route->family, route->gateway,
					   velo_nl_addr_len(route->family) * 8);
		if (!gateway) {
			rtnl_route_nh_free(nexthop);
			goto err;
		}
		rtnl_route_nh_set_gateway(nexthop, gateway);
	}
	if (route->flags)
		rtnl_route_nh_set_flags(nexthop, route->flags);
	rtnl_route_add_nexthop(rtnl_route, nexthop); /* the route owns it now */
	return rtnl_route;
err:
	rtnl_route_put(rtnl_route);
	return NULL;
}

int velo_nl_route_add(struct nl_sock *sk, const struct velo_nl_route *route)
{
	_cleanup_route_ struct rtnl_route *rtnl_route = route_build(route);

	if (!rtnl_route)
		return -errno;
	return velo_nl_errno(rtnl_route_add(sk, rtnl_route, NLM_F_EXCL));
}

int velo_nl_route_replace(struct nl_sock *sk, const struct velo_nl_route *route)
{
	_cleanup_route_ struct rtnl_route *rtnl_route = route_build(route);

	if (!rtnl_route)
		return -errno;
	return velo_nl_errno(rtnl_route_add(sk, rtnl_route, NLM_F_REPLACE));
}

int velo_nl_route_del(struct nl_sock *sk, const struct velo_nl_route *route)
{
	_cleanup_route_ struct rtnl_route *rtnl_route = route_build(route);

	if (!rtnl_route)
		return -errno;
	return velo_nl_errno(rtnl_route_delete(sk, rtnl_route, 0));
}

/* A neighbour object for neigh->addr on neigh->ifindex; NULL with errno. */
static struct rtnl_neigh *neigh_build(const struct velo_nl_neigh *neigh)
{
	_cleanup_nl_addr_ struct nl_addr *dst = NULL;
	struct rtnl_neigh *rtnl_neigh = rtnl_neigh_alloc();
	int ret;

	if (!rtnl_neigh) {
		errno = ENOMEM;
		return NULL;
	}
	dst = velo_nl_ip_build(neigh->family, neigh->addr, velo_nl_addr_len(neigh->family) * 8);
	ret = dst ? velo_nl_errno(rtnl_neigh_set_dst(rtnl_neigh, dst)) : -errno;
	if (ret) {
		rtnl_neigh_put(rtnl_neigh);
		errno = -ret;
		return NULL;
	}
	rtnl_neigh_set_ifindex(rtnl_neigh, neigh->ifindex);
	return rtnl_neigh;
}

int velo_nl_neigh_add(struct nl_sock *sk, const struct velo_nl_neigh *neigh)
{
	_cleanup_neigh_ struct rtnl_neigh *rtnl_neigh = neigh_build(neigh);
	_cleanup_nl_addr_ struct nl_addr *lladdr = NULL;

	if (!rtnl_neigh)
		return -errno;
	lladdr = velo_nl_mac_build(neigh->mac);
	if (!lladdr)
		return -errno;
	rtnl_neigh_set_lladdr(rtnl_neigh, lladdr);
	rtnl_neigh_set_state(rtnl_neigh, NUD_PERMANENT);
	return velo_nl_errno(rtnl_neigh_add(sk, rtnl_neigh, NLM_F_CREATE | NLM_F_REPLACE));
}

int velo_nl_neigh_del(struct nl_sock *sk, const struct velo_nl_neigh *neigh)
{
	_cleanup_neigh_ struct rtnl_neigh *rtnl_neigh = neigh_build(neigh);

	if (!rtnl_neigh)
		return -errno;
	return velo_nl_errno(rtnl_neigh_delete(sk, rtnl_neigh, 0));
}
