/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Conversions the netlink requests share, between velo's address bytes and
 * MAC text and libnl's struct nl_addr. Internal to the netlink_*.c files.
 */
#ifndef VELO_NET_NETLINK_NLADDR_H
#define VELO_NET_NETLINK_NLADDR_H

#include <stdint.h>

#include <netlink/addr.h>

void velo_nl_nladdr_putp(struct nl_addr **addr);
#define _cleanup_nl_addr_ __attribute__((cleanup(velo_nl_nladdr_putp)))

/* "aa:bb:cc:dd:ee:ff" from 6 bytes. */
void velo_nl_mac_fmt(const uint8_t *mac, char out[18]);
/* An AF_LLC nl_addr from "aa:bb:cc:dd:ee:ff"; NULL with errno on failure. */
struct nl_addr *velo_nl_mac_build(const char *text);
/* An AF_INET/AF_INET6 nl_addr of prefix; NULL with errno on failure. */
struct nl_addr *velo_nl_ip_build(int family, const uint8_t *addr, unsigned prefix);

#endif
