// SPDX-License-Identifier: Apache-2.0
/* Conversions the requests share: velo's address bytes and MAC text as libnl's nl_addr. */
#include <errno.h>
#include <stdio.h>

#include <sys/socket.h>
#include <netlink/addr.h>

#include "net/netlink.h"
#include "net/netlink_nladdr.h"

#ifndef AF_LLC
#define AF_LLC 26
#endif

void velo_nl_nladdr_putp(struct nl_addr **addr)
{
	if (*addr)
		nl_addr_put(*addr);
}

void velo_nl_mac_fmt(const uint8_t *mac, char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Not sscanf: its "%hhx" six times was 2% of an ADD's instructions. */
struct nl_addr *velo_nl_mac_build(const char *text)
{
	unsigned char mac[6];

	for (unsigned i = 0; i < sizeof(mac); i++) {
		const char *byte = text + 3 * i;
		int high = hex_digit(byte[0]);
		int low = high < 0 ? -1 : hex_digit(byte[1]);

		if (low < 0 || byte[2] != (i + 1 < sizeof(mac) ? ':' : '\0')) {
			errno = EINVAL;
			return NULL;
		}
		mac[i] = (unsigned char)(high << 4 | low);
	}
	return nl_addr_build(AF_LLC, mac, sizeof(mac));
}

struct nl_addr *velo_nl_ip_build(int family, const uint8_t *addr, unsigned prefix)
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
