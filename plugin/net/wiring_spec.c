// SPDX-License-Identifier: Apache-2.0
/* Small facts about a wiring spec, shared by the pod side, the host side and CHECK. */
#include <sys/socket.h>

#include "net/wiring_spec.h"

bool wiring_has_family(const struct wiring_spec *spec, int family)
{
	for (unsigned i = 0; i < spec->n_ips; i++)
		if (spec->ips[i].family == family)
			return true;
	return false;
}

uint8_t wiring_host_prefix(int family)
{
	return family == AF_INET ? 32 : 128;
}

const char *wiring_ip_str(int family, const uint8_t *addr, int prefix, char *buf, unsigned len)
{
	return velo_addr_fmt(family, addr, prefix, buf, len);
}
