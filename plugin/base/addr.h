/* SPDX-License-Identifier: Apache-2.0 */
/* Addresses as velo passes them between layers, and their text forms. */
#ifndef VELO_BASE_ADDR_H
#define VELO_BASE_ADDR_H

#include <stdbool.h>
#include <stdint.h>

#define VELO_MAX_IPS 8
#define VELO_MAX_IFACES 4 /* bounds velo_ip.interface */

struct velo_ip {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint8_t prefix;
	bool has_gateway;
	uint8_t gateway[16];
	int interface; /* index into interfaces, -1 when absent */
};

/* A network: an address whose bits past prefix are zero. */
struct velo_cidr {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint8_t prefix;
};

int velo_addr_parse(const char *text, int *family, uint8_t addr[16]);
/* "addr/prefix", prefix 1 to 3 digits; the address keeps its host bits. */
int velo_prefix_parse(const char *text, int *family, uint8_t addr[16], uint8_t *prefix);
/*
 * "10.0.0.0/8", "fd00::/64"; a bare address is a /32 or /128. -EINVAL, or
 * -ENOTUNIQ when host bits are set (so a message can say what is wrong).
 */
int velo_cidr_parse(const char *text, struct velo_cidr *out);
/* Writes "addr" or "addr/prefix" (prefix < 0: none) into buf. */
const char *velo_addr_fmt(int family, const uint8_t addr[16], int prefix, char *buf, unsigned len);

#endif
