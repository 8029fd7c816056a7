/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A port range as the fewest prefixes that cover it exactly (ports.c):
 * velo_pol_rule_v1 matches ports by prefix (bpf/lib/velo_policy.h), so an
 * endPort range becomes at most 30 entries (1-65535: 16).
 */
#ifndef VELO_POLICY_PORTS_H
#define VELO_POLICY_PORTS_H

#include <stdint.h>

#include "policy/objects.h"

#define VELO_POL_PORT_PREFIXES_MAX 32

struct velo_pol_port_prefix {
	uint16_t port; /* host order, the bits past len zero */
	uint8_t len; /* leading bits that count: 16 is one port, 0 every port */
};

/* A numbered port's key prefixes: its range's cover, or the whole protocol for port 0. */
unsigned velo_pol_port_prefixes(const struct velo_pol_port *port,
				struct velo_pol_port_prefix out[VELO_POL_PORT_PREFIXES_MAX]);
/* The cover of [first, last] (first <= last) into out; returns how many. */
unsigned velo_pol_port_cover(uint16_t first, uint16_t last,
			     struct velo_pol_port_prefix out[VELO_POL_PORT_PREFIXES_MAX]);

#endif
