/* SPDX-License-Identifier: Apache-2.0 */
/* The MTU a veth gets when the config sets none. */
#ifndef VELO_NET_WIRING_MTU_H
#define VELO_NET_WIRING_MTU_H

struct nl_sock;

/* Smallest MTU of the IPv4 and IPv6 default-route devices of sk's netns, else 1500. */
unsigned wiring_default_mtu(struct nl_sock *sk);
/* A pod's MTU: the node's default less the routing backend's overhead (not below 68 then). */
unsigned wiring_pod_mtu(unsigned default_mtu, unsigned overhead);

#endif
