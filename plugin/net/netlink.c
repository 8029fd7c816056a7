// SPDX-License-Identifier: Apache-2.0
/* libnl-route-3 helpers for the wiring; the one place that maps libnl errors to -errno. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/addr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/neighbour.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/route.h>
#include <netlink/socket.h>

#include "net/netlink.h"

#ifndef AF_LLC
#define AF_LLC 26
#endif

static void nl_addrp(struct nl_addr **addr)
{
	if (*addr)
		nl_addr_put(*addr);
}

static void rtnl_linkp(struct rtnl_link **link)
{
	if (*link)
		rtnl_link_put(*link);
}

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

#define _cleanup_nl_addr_ __attribute__((cleanup(nl_addrp)))
#define _cleanup_link_ __attribute__((cleanup(rtnl_linkp)))
#define _cleanup_rtnl_addr_ __attribute__((cleanup(rtnl_addrp)))
#define _cleanup_route_ __attribute__((cleanup(rtnl_routep)))
#define _cleanup_neigh_ __attribute__((cleanup(rtnl_neighp)))

/*
 * libnl folds the kernel's errno into fewer NLE_* codes (ENETUNREACH and
 * ENETDOWN both become NLE_FAILURE), so the error callback keeps the
 * original. velo is single-threaded: one slot is enough.
 */
static int kernel_errno;

static int save_kernel_errno(struct sockaddr_nl *nla, struct nlmsgerr *err, void *arg)
{
	(void)nla;
	(void)arg;
	kernel_errno = abs(err->error);
	return NL_STOP; /* libnl then returns -nl_syserr2nlerr(err->error) */
}

int velo_nl_errno(int nlerr)
{
	int saved = kernel_errno;

	kernel_errno = 0;
	if (nlerr >= 0)
		return 0;
	nlerr = -nlerr;
	/* Only trust the saved errno when it is the one this error came from. */
	if (saved && nl_syserr2nlerr(saved) == nlerr)
		return -saved;
	switch (nlerr) {
	case NLE_INTR:
		return -EINTR;
	case NLE_BAD_SOCK:
		return -EBADF;
	case NLE_AGAIN:
	case NLE_DUMP_INTR: /* the kernel's tables changed during a dump */
		return -EAGAIN;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_EXIST:
		return -EEXIST;
	case NLE_INVAL:
	case NLE_MISSING_ATTR:
	case NLE_AF_MISMATCH:
	case NLE_OBJ_MISMATCH:
	case NLE_PARSE_ERR:
		return -EINVAL;
	case NLE_RANGE:
		return -ERANGE;
	case NLE_MSGSIZE:
	case NLE_ATTRSIZE:
		return -EMSGSIZE;
	case NLE_OPNOTSUPP:
	case NLE_MSGTYPE_NOSUPPORT:
	case NLE_SRCRT_NOSUPPORT:
		return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:
		return -EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND:
	case NLE_NOATTR:
		return -ENOENT;
	case NLE_NOADDR:
		return -EADDRNOTAVAIL;
	case NLE_SEQ_MISMATCH:
	case NLE_MSG_OVERFLOW:
	case NLE_MSG_TRUNC:
	case NLE_MSG_TOOSHORT:
		return -EBADMSG;
	case NLE_NOCACHE:
		return -ENOENT;
	case NLE_BUSY:
		return -EBUSY;
	case NLE_PROTO_MISMATCH:
		return -EPROTONOSUPPORT;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_PERM:
		return -EPERM;
	case NLE_NODEV:
		return -ENODEV;
	case NLE_IMMUTABLE:
		return -EROFS;
	default:
		return -EIO;
	}
}

struct nl_sock *velo_nl_open(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	int ret;

	if (!sk) {
		errno = ENOMEM;
		return NULL;
	}
	ret = nl_connect(sk, NETLINK_ROUTE);
	if (ret < 0) {
		ret = velo_nl_errno(ret);
		nl_socket_free(sk);
		errno = -ret;
		return NULL;
	}
	nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, save_kernel_errno, NULL);
	return sk;
}

void velo_nl_closep(struct nl_sock **sk)
{
	if (*sk) {
		nl_socket_free(*sk);
		*sk = NULL;
	}
}

unsigned velo_nl_addr_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

static void mac_fmt(const uint8_t *mac, char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
}

static struct nl_addr *mac_build(const char *text)
{
	unsigned char mac[6];
	char end;

	if (sscanf(text, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx%c", &mac[0], &mac[1], &mac[2], &mac[3],
		   &mac[4], &mac[5], &end) != 6) {
		errno = EINVAL;
		return NULL;
	}
	return nl_addr_build(AF_LLC, mac, sizeof(mac));
}

static struct nl_addr *ip_build(int family, const uint8_t *addr, unsigned prefix)
{
	struct nl_addr *nl_addr;

	if (!velo_nl_addr_len(family)) {
		errno = EAFNOSUPPORT;
		return NULL;
	}
	nl_addr = nl_addr_build(family, addr, velo_nl_addr_len(family));
	if (!nl_addr) {
		errno = ENOMEM;
		return NULL;
	}
	nl_addr_set_prefixlen(nl_addr, prefix);
	return nl_addr;
}

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
		mac_fmt(nl_addr_get_binary_addr(mac), out->mac);
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
		hwaddr = mac_build(mac);
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

int velo_nl_link_up(struct nl_sock *sk, int ifindex)
{
	_cleanup_link_ struct rtnl_link *link = rtnl_link_alloc();
	_cleanup_link_ struct rtnl_link *change = rtnl_link_alloc();

	if (!link || !change)
		return -ENOMEM;
	rtnl_link_set_ifindex(link, ifindex);
	rtnl_link_set_flags(change, IFF_UP);
	return velo_nl_errno(rtnl_link_change(sk, link, change, 0));
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

int velo_nl_addr_add(struct nl_sock *sk, const struct velo_nl_addr *addr)
{
	_cleanup_rtnl_addr_ struct rtnl_addr *rtnl_addr = rtnl_addr_alloc();
	_cleanup_nl_addr_ struct nl_addr *local = NULL;
	int ret;

	if (!rtnl_addr)
		return -ENOMEM;
	local = ip_build(addr->family, addr->addr, addr->prefix);
	if (!local)
		return -errno;
	rtnl_addr_set_ifindex(rtnl_addr, addr->ifindex);
	ret = velo_nl_errno(rtnl_addr_set_local(rtnl_addr, local));
	if (ret)
		return ret;
	rtnl_addr_set_prefixlen(rtnl_addr, addr->prefix);
	rtnl_addr_set_flags(rtnl_addr, addr->flags);
	return velo_nl_errno(rtnl_addr_add(sk, rtnl_addr, NLM_F_EXCL));
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
	dst = ip_build(route->family, route->dst, route->dst_len);
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
		gateway = ip_build(route->family, route->gateway,
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

int velo_nl_neigh_add(struct nl_sock *sk, const struct velo_nl_neigh *neigh)
{
	_cleanup_neigh_ struct rtnl_neigh *rtnl_neigh = rtnl_neigh_alloc();
	_cleanup_nl_addr_ struct nl_addr *dst = NULL;
	_cleanup_nl_addr_ struct nl_addr *lladdr = NULL;
	int ret;

	if (!rtnl_neigh)
		return -ENOMEM;
	dst = ip_build(neigh->family, neigh->addr, velo_nl_addr_len(neigh->family) * 8);
	if (!dst)
		return -errno;
	lladdr = mac_build(neigh->mac);
	if (!lladdr)
		return -errno;
	rtnl_neigh_set_ifindex(rtnl_neigh, neigh->ifindex);
	ret = velo_nl_errno(rtnl_neigh_set_dst(rtnl_neigh, dst));
	if (ret)
		return ret;
	rtnl_neigh_set_lladdr(rtnl_neigh, lladdr);
	rtnl_neigh_set_state(rtnl_neigh, NUD_PERMANENT);
	return velo_nl_errno(rtnl_neigh_add(sk, rtnl_neigh, NLM_F_CREATE | NLM_F_REPLACE));
}

/* Raw dumps. */

struct dump_ctx {
	int (*parse)(struct nlmsghdr *hdr, struct dump_ctx *ctx);
	union {
		velo_nl_route_fn route;
		velo_nl_addr_fn addr;
		velo_nl_neigh_fn neigh;
	} fn;
	void *arg;
	int ret; /* the first nonzero return of fn; later entries are skipped */
};

static int copy_addr(struct nlattr *attr, int family, uint8_t out[16])
{
	unsigned len = velo_nl_addr_len(family);

	if (!attr || !len || (unsigned)nla_len(attr) < len)
		return -EINVAL;
	memcpy(out, nla_data(attr), len);
	return 0;
}

static int parse_route(struct nlmsghdr *hdr, struct dump_ctx *ctx)
{
	struct nlattr *tb[RTA_MAX + 1];
	struct velo_nl_route route = { 0 };
	struct rtmsg *rtm;

	if (hdr->nlmsg_type != RTM_NEWROUTE || nlmsg_parse(hdr, sizeof(*rtm), tb, RTA_MAX, NULL))
		return 0;
	rtm = nlmsg_data(hdr);
	route.family = rtm->rtm_family;
	if (!velo_nl_addr_len(route.family))
		return 0;
	route.table = tb[RTA_TABLE] ? nla_get_u32(tb[RTA_TABLE]) : rtm->rtm_table;
	route.protocol = rtm->rtm_protocol;
	route.scope = rtm->rtm_scope;
	route.type = rtm->rtm_type;
	route.dst_len = rtm->rtm_dst_len;
	route.flags = rtm->rtm_flags;
	if (tb[RTA_DST])
		copy_addr(tb[RTA_DST], route.family, route.dst);
	if (tb[RTA_OIF]) {
		route.oif = (int)nla_get_u32(tb[RTA_OIF]);
		route.oifs[route.n_oifs++] = route.oif;
	}
	if (tb[RTA_GATEWAY])
		route.has_gateway = !copy_addr(tb[RTA_GATEWAY], route.family, route.gateway);
	if (tb[RTA_MULTIPATH]) {
		struct rtnexthop *nh = nla_data(tb[RTA_MULTIPATH]);
		int left = nla_len(tb[RTA_MULTIPATH]);

		while (RTNH_OK(nh, left) &&
		       route.n_oifs < sizeof(route.oifs) / sizeof(route.oifs[0])) {
			route.oifs[route.n_oifs++] = nh->rtnh_ifindex;
			left -= RTNH_ALIGN(nh->rtnh_len);
			nh = RTNH_NEXT(nh);
		}
		if (!route.oif && route.n_oifs)
			route.oif = route.oifs[0];
	}
	return ctx->fn.route(&route, ctx->arg);
}

static int parse_addr(struct nlmsghdr *hdr, struct dump_ctx *ctx)
{
	struct nlattr *tb[IFA_MAX + 1];
	struct velo_nl_addr addr = { 0 };
	struct ifaddrmsg *ifa;

	if (hdr->nlmsg_type != RTM_NEWADDR || nlmsg_parse(hdr, sizeof(*ifa), tb, IFA_MAX, NULL))
		return 0;
	ifa = nlmsg_data(hdr);
	addr.family = ifa->ifa_family;
	addr.ifindex = (int)ifa->ifa_index;
	addr.prefix = ifa->ifa_prefixlen;
	addr.flags = tb[IFA_FLAGS] ? nla_get_u32(tb[IFA_FLAGS]) : ifa->ifa_flags;
	/* IFA_LOCAL is the address itself; IFA_ADDRESS is the peer on point-to-point links. */
	if (copy_addr(tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS], addr.family, addr.addr))
		return 0;
	return ctx->fn.addr(&addr, ctx->arg);
}

static int parse_neigh(struct nlmsghdr *hdr, struct dump_ctx *ctx)
{
	struct nlattr *tb[NDA_MAX + 1];
	struct velo_nl_neigh neigh = { 0 };
	struct ndmsg *ndm;

	if (hdr->nlmsg_type != RTM_NEWNEIGH || nlmsg_parse(hdr, sizeof(*ndm), tb, NDA_MAX, NULL))
		return 0;
	ndm = nlmsg_data(hdr);
	neigh.family = ndm->ndm_family;
	neigh.ifindex = ndm->ndm_ifindex;
	neigh.state = ndm->ndm_state;
	if (copy_addr(tb[NDA_DST], neigh.family, neigh.addr))
		return 0;
	if (tb[NDA_LLADDR] && nla_len(tb[NDA_LLADDR]) == 6)
		mac_fmt(nla_data(tb[NDA_LLADDR]), neigh.mac);
	return ctx->fn.neigh(&neigh, ctx->arg);
}

static int dump_valid(struct nl_msg *msg, void *arg)
{
	struct dump_ctx *ctx = arg;

	/* Keep reading to the end so the socket stays usable; just stop calling fn. */
	if (!ctx->ret)
		ctx->ret = ctx->parse(nlmsg_hdr(msg), ctx);
	return NL_OK;
}

static int dump(struct nl_sock *sk, int type, void *hdr, size_t hdr_len, struct dump_ctx *ctx)
{
	int ret;

	ret = velo_nl_errno(nl_send_simple(sk, type, NLM_F_DUMP, hdr, hdr_len));
	if (ret)
		return ret;
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, dump_valid, ctx);
	ret = velo_nl_errno(nl_recvmsgs_default(sk));
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_DEFAULT, NULL, NULL);
	return ret ? ret : ctx->ret;
}

int velo_nl_route_dump(struct nl_sock *sk, int family, velo_nl_route_fn fn, void *arg)
{
	struct rtmsg rtm = { .rtm_family = family };
	struct dump_ctx ctx = { .parse = parse_route, .fn.route = fn, .arg = arg };

	return dump(sk, RTM_GETROUTE, &rtm, sizeof(rtm), &ctx);
}

int velo_nl_route_match(struct nl_sock *sk, int family, const uint8_t *dst, velo_nl_route_fn fn,
			void *arg)
{
	struct rtmsg rtm = {
		.rtm_family = (uint8_t)family,
		.rtm_dst_len = (uint8_t)(velo_nl_addr_len(family) * 8),
		.rtm_flags = RTM_F_FIB_MATCH,
	};
	struct dump_ctx ctx = { .parse = parse_route, .fn.route = fn, .arg = arg };
	struct nl_msg *msg = nlmsg_alloc_simple(RTM_GETROUTE, NLM_F_REQUEST);
	int ret;

	if (!msg)
		return -ENOMEM;
	ret = nlmsg_append(msg, &rtm, sizeof(rtm), NLMSG_ALIGNTO);
	if (!ret)
		ret = nla_put(msg, RTA_DST, (int)velo_nl_addr_len(family), dst);
	if (!ret)
		ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return velo_nl_errno(ret);
	/*
	 * The answer and the ack nl_send_auto asked for come as two datagrams (an
	 * error comes alone): read both, or the next request reads this ack.
	 */
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, dump_valid, &ctx);
	ret = velo_nl_errno(nl_recvmsgs_default(sk));
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_DEFAULT, NULL, NULL);
	if (!ret)
		ret = velo_nl_errno(nl_wait_for_ack(sk));
	return ret ? ret : ctx.ret;
}

int velo_nl_addr_dump(struct nl_sock *sk, int family, velo_nl_addr_fn fn, void *arg)
{
	struct ifaddrmsg ifa = { .ifa_family = family };
	struct dump_ctx ctx = { .parse = parse_addr, .fn.addr = fn, .arg = arg };

	return dump(sk, RTM_GETADDR, &ifa, sizeof(ifa), &ctx);
}

int velo_nl_neigh_dump(struct nl_sock *sk, int family, velo_nl_neigh_fn fn, void *arg)
{
	struct ndmsg ndm = { .ndm_family = family };
	struct dump_ctx ctx = { .parse = parse_neigh, .fn.neigh = fn, .arg = arg };

	return dump(sk, RTM_GETNEIGH, &ndm, sizeof(ndm), &ctx);
}
