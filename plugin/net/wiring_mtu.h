/* SPDX-License-Identifier: Apache-2.0 */
/* The MTU a veth gets when the config sets none. */
#ifndef VELO_WIRING_MTU_H
#define VELO_WIRING_MTU_H

/* Smallest MTU of the IPv4 and IPv6 default-route devices, else 1500. */
unsigned wiring_default_mtu(void);

#endif
