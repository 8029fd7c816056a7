/* SPDX-License-Identifier: Apache-2.0 */
/* CNI results: parsed from any version IPAM answers in, printed in any version velo speaks. */
#ifndef VELO_CNI_RESULT_H
#define VELO_CNI_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#include "base/addr.h"
#include "base/cni.h"

#define VELO_MAX_ROUTES 16

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
	char *sandbox; /* owned (velo_result_free); NULL for host interfaces */
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

#endif
