// SPDX-License-Identifier: Apache-2.0
/* Prefixes: text, containment and map keys (cidr.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "base/addr.h"
#include "policy/cidr.h"

static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

int velo_pol_cidr_parse(const char *text, bool full, struct velo_pol_cidr *out)
{
	unsigned bytes;

	memset(out, 0, sizeof(*out));
	if (full) {
		if (velo_addr_parse(text, &out->family, out->addr))
			return -EINVAL;
		out->prefix = out->family == AF_INET ? 32 : 128;
		return 0;
	}
	if (velo_prefix_parse(text, &out->family, out->addr, &out->prefix))
		return -EINVAL;
	/* As the API server's net.ParseCIDR: the prefix, host bits dropped. */
	bytes = out->prefix / 8;
	if (out->prefix % 8)
		out->addr[bytes++] &= (uint8_t)(0xff00 >> (out->prefix % 8));
	memset(out->addr + bytes, 0, 16 - bytes);
	return 0;
}

bool velo_pol_cidr_inside(const struct velo_pol_cidr *inner, const struct velo_pol_cidr *outer)
{
	unsigned bytes = outer->prefix / 8, bits = outer->prefix % 8;

	if (inner->family != outer->family || inner->prefix < outer->prefix ||
	    memcmp(inner->addr, outer->addr, bytes))
		return false;
	return !bits || !((inner->addr[bytes] ^ outer->addr[bytes]) & (0xff00 >> bits));
}

void velo_pol_cidr_key(const struct velo_pol_cidr *cidr, struct velo_pol_ip_key *key)
{
	memset(key, 0, sizeof(*key));
	if (cidr->family == AF_INET) {
		memcpy(key->addr, v4_mapped, sizeof(v4_mapped));
		memcpy(key->addr + 12, cidr->addr, 4);
		key->prefixlen = 96u + cidr->prefix;
		return;
	}
	memcpy(key->addr, cidr->addr, 16);
	key->prefixlen = cidr->prefix;
}

void velo_pol_key_cidr(const struct velo_pol_ip_key *key, struct velo_pol_cidr *cidr)
{
	memset(cidr, 0, sizeof(*cidr));
	if (key->prefixlen >= 96 && !memcmp(key->addr, v4_mapped, sizeof(v4_mapped))) {
		cidr->family = AF_INET;
		memcpy(cidr->addr, key->addr + 12, 4);
		cidr->prefix = (uint8_t)(key->prefixlen - 96);
		return;
	}
	cidr->family = AF_INET6;
	memcpy(cidr->addr, key->addr, 16);
	cidr->prefix = (uint8_t)key->prefixlen;
}

const char *velo_pol_cidr_text(const struct velo_pol_cidr *cidr, char *buf, size_t len)
{
	bool full = cidr->prefix == (cidr->family == AF_INET ? 32 : 128);

	if (!velo_addr_fmt(cidr->family, cidr->addr, full ? -1 : cidr->prefix, buf, (unsigned)len))
		snprintf(buf, len, "?");
	return buf;
}
