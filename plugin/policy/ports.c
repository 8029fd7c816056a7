// SPDX-License-Identifier: Apache-2.0
/* Port ranges into prefixes (ports.h). */
#include "policy/ports.h"

unsigned velo_pol_port_cover(uint16_t first, uint16_t last,
			     struct velo_pol_port_prefix out[VELO_POL_PORT_PREFIXES_MAX])
{
	uint32_t at = first, end = (uint32_t)last + 1;
	unsigned n = 0;

	/* Greedy: the largest aligned block starting at `at` that stays inside the range. */
	while (at < end) {
		unsigned bits = 0;

		while (bits < 16 && !(at & ((1u << (bits + 1)) - 1)) &&
		       at + (1u << (bits + 1)) <= end)
			bits++;
		out[n].port = (uint16_t)at;
		out[n].len = (uint8_t)(16 - bits);
		n++;
		at += 1u << bits;
	}
	return n;
}

unsigned velo_pol_port_prefixes(const struct velo_pol_port *port,
				struct velo_pol_port_prefix out[VELO_POL_PORT_PREFIXES_MAX])
{
	if (port->port)
		return velo_pol_port_cover(port->port, port->end_port, out);
	out[0] = (struct velo_pol_port_prefix){ 0, 0 };
	return 1;
}
