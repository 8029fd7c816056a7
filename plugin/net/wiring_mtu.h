/* SPDX-License-Identifier: Apache-2.0 */
/* The MTU a veth gets when the config sets none. */
#ifndef VELO_NET_WIRING_MTU_H
#define VELO_NET_WIRING_MTU_H

struct nl_sock;

/* Smallest MTU of the IPv4 and IPv6 default-route devices of sk's netns, else 1500. */
unsigned wiring_default_mtu(struct nl_sock *sk);

#endif
