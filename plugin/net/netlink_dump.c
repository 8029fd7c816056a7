// SPDX-License-Identifier: Apache-2.0
/*
 * Raw dumps of routes, addresses and neighbours, parsed into velo's small
 * structs without libnl's caches, and the FIB match of one address.
 */
#include <errno.h>
#include <string.h>

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>

#include "net/netlink.h"
#include "net/netlink_dump.h"
#include "net/netlink_nladdr.h"

struct dump_ctx {
	int (*parse)(struct nlmsghdr *hdr, struct dump_ctx *ctx);
	union {
		velo_nl_route_fn route;
		velo_nl_addr_fn addr;
		velo_nl_neigh_fn neigh;
		velo_nl_fdb_fn fdb;
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
		velo_nl_mac_fmt(nla_data(tb[NDA_LLADDR]), neigh.mac);
	return ctx->fn.neigh(&neigh, ctx->arg);
}

static int parse_fdb(struct nlmsghdr *hdr, struct dump_ctx *ctx)
{
	struct nlattr *tb[NDA_MAX + 1];
	struct velo_nl_fdb fdb = { 0 };
	struct ndmsg *ndm;

	if (hdr->nlmsg_type != RTM_NEWNEIGH || nlmsg_parse(hdr, sizeof(*ndm), tb, NDA_MAX, NULL))
		return 0;
	ndm = nlmsg_data(hdr);
	if (ndm->ndm_family != AF_BRIDGE || !tb[NDA_LLADDR] || nla_len(tb[NDA_LLADDR]) != 6)
		return 0;
	fdb.ifindex = ndm->ndm_ifindex;
	fdb.state = ndm->ndm_state;
	fdb.flags = ndm->ndm_flags;
	velo_nl_mac_fmt(nla_data(tb[NDA_LLADDR]), fdb.mac);
	/* The remote's family is only in the attribute's length. */
	if (tb[NDA_DST] && nla_len(tb[NDA_DST]) == 4)
		fdb.dst_family = AF_INET;
	else if (tb[NDA_DST] && nla_len(tb[NDA_DST]) == 16)
		fdb.dst_family = AF_INET6;
	if (fdb.dst_family)
		memcpy(fdb.dst, nla_data(tb[NDA_DST]), (size_t)nla_len(tb[NDA_DST]));
	return ctx->fn.fdb(&fdb, ctx->arg);
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

int velo_nl_fdb_dump(struct nl_sock *sk, velo_nl_fdb_fn fn, void *arg)
{
	struct ndmsg ndm = { .ndm_family = AF_BRIDGE };
	struct dump_ctx ctx = { .parse = parse_fdb, .fn.fdb = fn, .arg = arg };

	return dump(sk, RTM_GETNEIGH, &ndm, sizeof(ndm), &ctx);
}
