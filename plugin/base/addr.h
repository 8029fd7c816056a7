/* SPDX-License-Identifier: Apache-2.0 */
/* Addresses as velo passes them between layers, and their text forms. */
#ifndef VELO_ADDR_H
#define VELO_ADDR_H

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

int velo_addr_parse(const char *text, int *family, uint8_t addr[16]);
int velo_prefix_parse(const char *text, int *family, uint8_t addr[16], uint8_t *prefix);
/* Writes "addr" or "addr/prefix" (prefix < 0: none) into buf. */
const char *velo_addr_fmt(int family, const uint8_t addr[16], int prefix, char *buf, unsigned len);

#endif
