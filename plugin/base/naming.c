// SPDX-License-Identifier: Apache-2.0
/* Host-side veth names: a stable hash of the attachment, so DEL can find the veth without state. */
#include <errno.h>
#include <string.h>

#include "base/naming.h"

#define FNV1A64_OFFSET 0xcbf29ce484222325ULL
#define FNV1A64_PRIME 0x100000001b3ULL
#define HOST_IFNAME_LEN 15 /* IFNAMSIZ - 1 */

static uint64_t fnv1a64_continue(uint64_t hash, const void *data, size_t len)
{
	const unsigned char *bytes = data;

	for (size_t i = 0; i < len; i++) {
		hash ^= bytes[i];
		hash *= FNV1A64_PRIME;
	}
	return hash;
}

uint64_t velo_fnv1a64(const void *data, size_t len)
{
	return fnv1a64_continue(FNV1A64_OFFSET, data, len);
}

bool velo_veth_prefix_valid(const char *prefix)
{
	size_t len = prefix ? strlen(prefix) : 0;

	/* Lower case and digits only: nothing the kernel refuses in a name ('/', ':', spaces). */
	return len > 0 && len <= VELO_VETH_PREFIX_MAX &&
	       strspn(prefix, "abcdefghijklmnopqrstuvwxyz0123456789") == len;
}

int velo_host_ifname(const char *prefix, const char *container_id, const char *ifname, char out[16])
{
	static const char hex[] = "0123456789abcdef";
	uint64_t hash;
	size_t len;

	if (!container_id || !ifname || !velo_veth_prefix_valid(prefix))
		return -EINVAL;
	/* Hash "<container_id>\0<ifname>": the NUL keeps ("ab","c") apart from ("a","bc"). */
	hash = fnv1a64_continue(FNV1A64_OFFSET, container_id, strlen(container_id) + 1);
	hash = fnv1a64_continue(hash, ifname, strlen(ifname));

	len = strlen(prefix);
	memcpy(out, prefix, len);
	/* Most significant nibbles first, as many as fit. */
	for (int shift = 60; len < HOST_IFNAME_LEN; shift -= 4)
		out[len++] = hex[(hash >> shift) & 0xf];
	out[len] = '\0';
	return 0;
}
