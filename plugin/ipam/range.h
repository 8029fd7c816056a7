/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velo's own IPAM config, in host-local's shape: "ranges" (a list of range
 * sets, each a list of {subnet, rangeStart, rangeEnd, gateway} of one family),
 * "routes" and "dataDir", plus "hostLocalDataDir" (whose lease files velo
 * never hands out). Validated whole: code 7 names the field.
 */
#ifndef VELO_IPAM_RANGE_H
#define VELO_IPAM_RANGE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#define IPAM_MAX_SETS 4 /* one address per set: dual-stack needs two */
#define IPAM_MAX_RANGES 8 /* per set */
#define IPAM_MAX_ROUTES 16
/* A range hands out at most this many addresses (the first ones from rangeStart). */
#define IPAM_RANGE_MAX_SLOTS 65536U
#define IPAM_HOST_LOCAL_DIR "/var/lib/cni/networks"

struct ipam_range {
	int family; /* AF_INET or AF_INET6 */
	uint8_t subnet[16];
	uint8_t prefix;
	uint8_t start[16]; /* first address handed out */
	uint8_t end[16]; /* last one (rangeEnd, capped to IPAM_RANGE_MAX_SLOTS) */
	uint8_t gateway[16]; /* never handed out */
	uint32_t n_slots; /* end - start + 1 */
};

struct ipam_range_set {
	unsigned n_ranges;
	struct ipam_range ranges[IPAM_MAX_RANGES];
};

struct ipam_route {
	int family;
	uint8_t dst[16];
	uint8_t prefix;
	bool has_gateway;
	uint8_t gateway[16];
};

struct ipam_conf {
	unsigned n_sets;
	struct ipam_range_set sets[IPAM_MAX_SETS];
	unsigned n_routes;
	struct ipam_route routes[IPAM_MAX_ROUTES];
	char data_dir[PATH_MAX]; /* default <stateDir>/ipam */
	char host_local_dir[PATH_MAX]; /* "" when disabled */
};

/*
 * Parses the "ipam" object (type "velo"); state_dir gives the default
 * dataDir. 0, or -EINVAL with code 7 recorded naming the field.
 */
int ipam_conf_parse(const cJSON *ipam, const char *state_dir, struct ipam_conf *conf);
/* The address of slot idx of range into addr. */
void ipam_range_addr(const struct ipam_range *range, uint32_t idx, uint8_t addr[16]);
/* Whether addr is one range hands out; its slot into *idx. */
bool ipam_range_index(const struct ipam_range *range, int family, const uint8_t addr[16],
		      uint32_t *idx);
/* "10.244.1.0/24 (10.244.1.2-10.244.1.254)" into buf. */
const char *ipam_range_fmt(const struct ipam_range *range, char *buf, unsigned len);

#endif
