/* SPDX-License-Identifier: Apache-2.0 */
/* Packet helpers the BPF_PROG_TEST_RUN tests share (test_prog_run.c, test_uplink_xdp.c). */
#ifndef VELO_TEST_BPF_FIXTURES_H
#define VELO_TEST_BPF_FIXTURES_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "bpf/lib/velo_shared.h"

/* The Internet checksum of len bytes (an odd last byte padded with zero). */
static uint16_t csum_fold(const void *data, unsigned len)
{
	const uint8_t *bytes = data;
	uint32_t sum = 0;

	for (unsigned i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)bytes[i] << 8 | bytes[i + 1];
	if (len & 1)
		sum += (uint32_t)bytes[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The endpoint map key of an address: IPv4 as ::ffff:a.b.c.d. */
static struct velo_ep_key key_of(const char *addr)
{
	struct velo_ep_key key = {};

	if (strchr(addr, ':')) {
		inet_pton(AF_INET6, addr, key.addr);
	} else {
		key.addr[10] = 0xff;
		key.addr[11] = 0xff;
		inet_pton(AF_INET, addr, &key.addr[12]);
	}
	return key;
}

#endif
