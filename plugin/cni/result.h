/* SPDX-License-Identifier: Apache-2.0 */
/* CNI results: parsed from any version IPAM answers in, printed in any version velo speaks. */
#ifndef VELO_RESULT_H
#define VELO_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#include "base/cni.h"

#define VELO_MAX_IPS 8
#define VELO_MAX_ROUTES 16
#define VELO_MAX_IFACES 4

struct velo_ip {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint8_t prefix;
	bool has_gateway;
	uint8_t gateway[16];
	int interface; /* index into interfaces, -1 when absent */
};

struct velo_route {
	int family;
	uint8_t dst[16];
	uint8_t prefix;
	bool has_gateway;
	uint8_t gateway[16];
};

struct velo_interface {
	char name[16];
	char mac[18]; /* "aa:bb:cc:dd:ee:ff" or "" */
	char sandbox[4096]; /* "" for host interfaces */
};

struct velo_result {
	unsigned n_interfaces;
	struct velo_interface interfaces[VELO_MAX_IFACES];
	unsigned n_ips;
	struct velo_ip ips[VELO_MAX_IPS];
	unsigned n_routes;
	struct velo_route routes[VELO_MAX_ROUTES];
	cJSON *dns; /* owned copy, NULL when absent */
};

/*
 * Parses a result of version 0.3.0 to 1.1.0 (IPAM's or a prevResult).
 * Records code 101 (source "IPAM") or 7 with what is wrong.
 */
int velo_result_parse(const cJSON *json, struct velo_result *out);
/* The result in version's format; NULL with errno on failure. */
cJSON *velo_result_to_json(const struct velo_result *result, enum cni_version version);
void velo_result_free(struct velo_result *result);

/* Address helpers shared by the result, state and netlink code. */
int velo_addr_parse(const char *text, int *family, uint8_t addr[16]);
int velo_prefix_parse(const char *text, int *family, uint8_t addr[16], uint8_t *prefix);
/* Writes "addr" or "addr/prefix" (prefix < 0: none) into buf. */
const char *velo_addr_fmt(int family, const uint8_t addr[16], int prefix, char *buf, unsigned len);

#endif
