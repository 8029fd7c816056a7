// SPDX-License-Identifier: Apache-2.0
/*
 * IPv4 and IPv6 addresses and networks as text, in and out: shared by results,
 * records, netlink, IPAM ranges and the egress-deny annotation.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/addr.h"

int velo_addr_parse(const char *text, int *family, uint8_t addr[16])
{
	memset(addr, 0, 16);
	if (!text)
		return -EINVAL;
	if (inet_pton(AF_INET, text, addr) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, text, addr) == 1) {
		*family = AF_INET6;
		return 0;
	}
	memset(addr, 0, 16);
	return -EINVAL;
}

int velo_prefix_parse(const char *text, int *family, uint8_t addr[16], uint8_t *prefix)
{
	char host[INET6_ADDRSTRLEN];
	const char *slash, *digits;
	unsigned long len = 0;
	int ret;

	memset(addr, 0, 16);
	if (!text)
		return -EINVAL;
	slash = strchr(text, '/');
	if (!slash || (size_t)(slash - text) >= sizeof(host))
		return -EINVAL;
	memcpy(host, text, slash - text);
	host[slash - text] = '\0';

	/* Digits only: strtoul would take " 24", "+24" or "0x18". */
	digits = slash + 1;
	if (!*digits || strlen(digits) > 3)
		return -EINVAL;
	for (const char *c = digits; *c; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		len = len * 10 + (unsigned long)(*c - '0');
	}

	ret = velo_addr_parse(host, family, addr);
	if (ret)
		return ret;
	if (len > (*family == AF_INET ? 32UL : 128UL)) {
		memset(addr, 0, 16);
		return -EINVAL;
	}
	*prefix = (uint8_t)len;
	return 0;
}

static bool host_bits_zero(const struct velo_cidr *cidr)
{
	unsigned bytes = cidr->family == AF_INET ? 4 : 16;

	for (unsigned bit = cidr->prefix; bit < bytes * 8; bit++)
		if (cidr->addr[bit / 8] & (0x80 >> (bit % 8)))
			return false;
	return true;
}

int velo_cidr_parse(const char *text, struct velo_cidr *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if (text && strchr(text, '/')) {
		ret = velo_prefix_parse(text, &out->family, out->addr, &out->prefix);
	} else {
		ret = velo_addr_parse(text, &out->family, out->addr);
		out->prefix = out->family == AF_INET ? 32 : 128;
	}
	if (ret) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return host_bits_zero(out) ? 0 : -ENOTUNIQ;
}

const char *velo_addr_fmt(int family, const uint8_t addr[16], int prefix, char *buf, unsigned len)
{
	char host[INET6_ADDRSTRLEN];
	int n;

	if ((family != AF_INET && family != AF_INET6) || prefix > (family == AF_INET ? 32 : 128)) {
		errno = EINVAL;
		return NULL;
	}
	if (!inet_ntop(family, addr, host, sizeof(host)))
		return NULL;
	if (prefix < 0)
		n = snprintf(buf, len, "%s", host);
	else
		n = snprintf(buf, len, "%s/%d", host, prefix);
	if (n < 0 || (unsigned)n >= len) {
		errno = ENOSPC;
		return NULL;
	}
	return buf;
}
