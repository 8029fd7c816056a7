// SPDX-License-Identifier: Apache-2.0
/*
 * The routed path's lifecycle: precheck, create, finish, teardown, each
 * all or nothing, and the helpers on a spec's addresses the other wiring
 * files share. See wiring.h for the contract.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "net/netlink.h"
#include "net/netlink_dump.h"
#include "net/netlink_link.h"
#include "net/netns.h"
#include "net/retire.h"
#include "net/wiring.h"
#include "net/wiring_host.h"
#include "net/wiring_mtu.h"
#include "net/wiring_pod.h"

/* Precheck and teardown */

/* A socket made in the pod's netns: it keeps talking to that netns after we leave. */
static int pod_socket_open(const struct wiring_spec *spec, struct nl_sock **sk)
{
	struct netns_guard guard;
	int ret;

	ret = netns_enter(spec->netns_path, &guard);
	if (ret)
		return ret;
	*sk = velo_nl_open();
	ret = *sk ? 0
		  : cni_fail(-errno, VELO_ERR_NETLINK, "netlink socket in %s: %s", spec->netns_path,
			     strerror(errno));
	netns_leave(&guard);
	return ret;
}

/*
 * 0 when name is free in sk's netns, -EEXIST when it is taken. A veth in
 * the way whose host side a DEL retired, and velod hasn't deleted yet, is
 * deleted first: it is no conflict. retired_is_peer: the retired side is
 * name's peer (name is in the pod), not name itself.
 */
static int name_free(struct nl_sock *sk, const char *name, bool retired_is_peer)
{
	struct velo_nl_link link;
	int ret = velo_nl_link_index(sk, name);

	if (ret == -ENODEV)
		return 0;
	if (ret < 0)
		return ret;
	ret = velo_nl_link_get(sk, name, &link);
	if (!ret && velo_retired_clear(retired_is_peer ? link.peer_ifindex : link.ifindex))
		ret = velo_nl_link_index(sk, name);
	if (ret == -ENODEV)
		return 0;
	return ret < 0 ? ret : -EEXIST;
}

/* A default route of velo's own (protocol, link-local gateway): its device's index. */
static int find_velo_default(const struct velo_nl_route *route, void *arg)
{
	const uint8_t *gateway = route->family == AF_INET ? wiring_gateway4 : wiring_gateway6;

	if (route->protocol == VELO_RTPROT && !route->dst_len && route->has_gateway &&
	    !memcmp(route->gateway, gateway, velo_nl_addr_len(route->family)))
		*(int *)arg = route->oif;
	return 0;
}

/*
 * An interface velo wired is in the pod already (another CNI_IFNAME of this
 * network, or of another velo network): its default routes via the same
 * link-local gateways leave no room for a second set, and a second interface
 * without them would answer from the first (the host veths' strict rp_filter
 * drops that). Refused before any side effect, saying so, instead of failing
 * halfway with the kernel's EEXIST.
 */
static int one_velo_interface(struct nl_sock *sk, const struct wiring_spec *spec)
{
	int oif = 0, ret;

	ret = velo_nl_route_dump(sk, AF_UNSPEC, find_velo_default, &oif);
	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "routes in %s: %s", spec->netns_path,
				strerror(-ret));
	if (!oif)
		return 0;
	return cni_fail(-EEXIST, VELO_ERR_IF_EXISTS,
			"%s already has an interface wired by velo (ifindex %d holds the default "
			"routes via 169.254.1.1/fe80::1): velo wires one interface per pod netns, "
			"so %s is refused",
			spec->netns_path, oif, spec->pod_ifname);
}

int wiring_precheck(const struct wiring_spec *spec, struct wiring_state *state)
{
	int ret;

	ret = pod_socket_open(spec, &state->pod_sk);
	if (ret)
		return ret;
	ret = name_free(state->pod_sk, spec->pod_ifname, true);
	if (ret == -EEXIST)
		return cni_fail(ret, VELO_ERR_IF_EXISTS, "interface %s already exists in %s",
				spec->pod_ifname, spec->netns_path);
	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "look up %s in %s: %s", spec->pod_ifname,
				spec->netns_path, strerror(-ret));
	ret = one_velo_interface(state->pod_sk, spec);
	if (ret)
		return ret;

	state->host_sk = velo_nl_open();
	if (!state->host_sk)
		return cni_fail(-errno, VELO_ERR_NETLINK, "netlink socket: %s", strerror(errno));
	ret = name_free(state->host_sk, spec->host_ifname, false);
	if (ret == -EEXIST)
		return cni_fail(ret, VELO_ERR_IF_EXISTS, "interface %s already exists on the node",
				spec->host_ifname);
	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "look up %s: %s", spec->host_ifname,
				strerror(-ret));
	return 0;
}

void wiring_close(struct wiring_state *state)
{
	velo_nl_closep(&state->host_sk);
	velo_nl_closep(&state->pod_sk);
}

/* Deletes the veth; its peer, the host routes and neighbours and the pod's side go with it. */
static void undo_veth(struct nl_sock *sk, const char *host_name)
{
	int undo = velo_nl_link_del(sk, host_name);

	if (undo && undo != -ENODEV)
		pr_err("undo: delete veth %s: %s", host_name, strerror(-undo));
}

int wiring_create(const struct wiring_spec *spec, struct wiring_state *state)
{
	struct nl_sock *sk = state->host_sk;
	const char *host_name = spec->host_ifname;
	unsigned mtu;
	int host_ifindex, netns_fd, ret;

	if (!sk || !state->pod_sk)
		return cni_fail(-EINVAL, VELO_ERR_INTERNAL, "wiring: create before precheck");
	mtu = spec->mtu ? spec->mtu : wiring_pod_mtu(wiring_default_mtu(sk), spec->mtu_overhead);
	netns_fd = open(spec->netns_path, O_RDONLY | O_CLOEXEC);
	if (netns_fd < 0)
		return cni_fail(-errno, VELO_ERR_NETNS, "netns %s: %s", spec->netns_path,
				strerror(errno));
	/* The peer is born in the pod's netns: it never exists on the node under its name. */
	ret = velo_nl_veth_add(sk, host_name, VELO_HOST_MAC, mtu, spec->pod_ifname, netns_fd);
	close(netns_fd);
	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "create veth %s / %s: %s", host_name,
				spec->pod_ifname, strerror(-ret));

	host_ifindex = velo_nl_link_index(sk, host_name);
	if (host_ifindex < 0) {
		ret = cni_fail(host_ifindex, VELO_ERR_NETLINK, "host %s: look up: %s", host_name,
			       strerror(-host_ifindex));
		goto err_del_veth;
	}
	ret = wiring_host_sysctls(spec);
	if (ret)
		goto err_del_veth;
	/*
	 * The IPv4 forward path checks the input device's forwarding, not
	 * ip_forward. Strict reverse-path check on this link only (the kernel
	 * uses the larger of all and the device): a packet with a source the
	 * node doesn't route back to this veth, such as another pod's address,
	 * is dropped. IPv6 has no rp_filter; docs/threat-model.md says so.
	 */
	ret = velo_nl_link_up_forwarding(sk, host_ifindex);
	if (ret) {
		ret = cni_fail(ret, VELO_ERR_NETLINK, "host %s: set up: %s", host_name,
			       strerror(-ret));
		goto err_del_veth;
	}
	ret = wiring_pod_link_setup(spec, state->pod_sk, &state->pod_ifindex, state->pod_mac);
	if (ret)
		goto err_del_veth;

	state->host_ifindex = host_ifindex;
	/* The kernel takes the MAC velo_nl_veth_add gave it as is. */
	snprintf(state->host_mac, sizeof(state->host_mac), "%s", VELO_HOST_MAC);
	pr_debug("created %s (ifindex %d) and %s (ifindex %d, %s), mtu %u", host_name, host_ifindex,
		 spec->pod_ifname, state->pod_ifindex, state->pod_mac, mtu);
	return 0;

err_del_veth:
	undo_veth(sk, host_name);
	return ret;
}

int wiring_finish(const struct wiring_spec *spec, const struct wiring_state *state)
{
	struct nl_sock *sk = state->host_sk;
	int ret;

	if (spec->n_ips > VELO_MAX_IPS)
		return cni_fail(-EINVAL, VELO_ERR_INTERNAL, "wiring: %u addresses, at most %d",
				spec->n_ips, VELO_MAX_IPS);
	if (!sk || !state->pod_sk)
		return cni_fail(-EINVAL, VELO_ERR_INTERNAL, "wiring: finish before precheck");
	if (wiring_has_family(spec, AF_INET6)) {
		ret = spec->may_get_ipv6 ? 0 : wiring_host_ipv6_enable(spec);
		if (!ret)
			ret = wiring_host_ipv6_forwarding(spec);
		if (ret)
			goto err_del_veth;
	}
	ret = wiring_host_routes(sk, spec, state->host_ifindex);
	if (ret)
		goto err_del_veth;
	ret = wiring_pod_addressing(spec, state->pod_sk, state->pod_ifindex);
	if (ret)
		goto err_del_veth;
	/* Needs the pod's MAC, which the kernel chose when it made the peer. */
	ret = wiring_host_neighbours(sk, spec, state->host_ifindex, state->pod_mac);
	if (ret)
		goto err_del_veth;
	return 0;

err_del_veth:
	undo_veth(sk, spec->host_ifname);
	return ret;
}
