// SPDX-License-Identifier: Apache-2.0
/* Open TCP sockets' sides by cookie, to turn their ends client -> server (flows_socks.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "flows_socks.h"

/*
 * Two generations of open addressing, linear probing; cookie 0 marks a free
 * slot (the kernel's start at 1). When the newer one fills up, the older one
 * is dropped and the newer one takes its place: sockets whose end never comes
 * (their pod's program detached first, or the end was lost) age out instead
 * of filling the table for good.
 */
struct flow_sock_slot {
	uint64_t cookie;
	bool passive;
};

struct sock_gen {
	uint32_t count;
	struct flow_sock_slot *slots;
};

struct flow_socks {
	uint32_t gen_cap; /* sockets per generation: slots are twice that, so a probe always ends */
	uint32_t n_slots;
	struct sock_gen gens[2]; /* [0] the newer one */
};

struct flow_socks *flow_socks_new(uint32_t cap)
{
	struct flow_socks *socks;

	if (cap < 2 || cap > UINT32_MAX / 2) {
		errno = EINVAL;
		return NULL;
	}
	socks = calloc(1, sizeof(*socks));
	if (!socks)
		return NULL;
	socks->gen_cap = cap / 2;
	socks->n_slots = socks->gen_cap * 2;
	for (int g = 0; g < 2; g++) {
		socks->gens[g].slots = calloc(socks->n_slots, sizeof(struct flow_sock_slot));
		if (!socks->gens[g].slots) {
			flow_socks_free(socks);
			errno = ENOMEM;
			return NULL;
		}
	}
	return socks;
}

void flow_socks_free(struct flow_socks *socks)
{
	if (!socks)
		return;
	free(socks->gens[0].slots);
	free(socks->gens[1].slots);
	free(socks);
}

uint32_t flow_socks_count(const struct flow_socks *socks)
{
	return socks->gens[0].count + socks->gens[1].count;
}

static uint32_t home(const struct flow_socks *socks, uint64_t cookie)
{
	/* Cookies count up: a multiplicative hash spreads neighbours apart. */
	return (uint32_t)((cookie * 0x9e3779b97f4a7c15ull) >> 32) % socks->n_slots;
}

/* The slot holding cookie, or the free slot where the probe ended. */
static uint32_t probe(const struct flow_socks *socks, const struct sock_gen *gen, uint64_t cookie)
{
	uint32_t i = home(socks, cookie);

	while (gen->slots[i].cookie && gen->slots[i].cookie != cookie)
		i = (i + 1) % socks->n_slots;
	return i;
}

static void remember(struct flow_socks *socks, uint64_t cookie, bool passive)
{
	struct sock_gen *gen = &socks->gens[0];
	uint32_t i = probe(socks, gen, cookie);

	if (!gen->slots[i].cookie && gen->count == socks->gen_cap) {
		struct sock_gen dropped = socks->gens[1];

		memset(dropped.slots, 0, socks->n_slots * sizeof(*dropped.slots));
		dropped.count = 0;
		socks->gens[1] = *gen;
		*gen = dropped;
		i = probe(socks, gen, cookie);
	}
	if (!gen->slots[i].cookie)
		gen->count++;
	gen->slots[i] = (struct flow_sock_slot){ cookie, passive };
}

/* Removes cookie's slot from gen, shifting back the entries probed past it; false if none. */
static bool forget_in(const struct flow_socks *socks, struct sock_gen *gen, uint64_t cookie,
		      bool *passive)
{
	uint32_t i = probe(socks, gen, cookie), j = i, want;

	if (!gen->slots[i].cookie)
		return false;
	*passive = gen->slots[i].passive;
	for (;;) {
		gen->slots[i].cookie = 0;
		for (;;) {
			j = (j + 1) % socks->n_slots;
			if (!gen->slots[j].cookie) {
				gen->count--;
				return true;
			}
			want = home(socks, gen->slots[j].cookie);
			/* j may move to i unless its home lies cyclically in (i, j]. */
			if (i <= j ? (want <= i || want > j) : (want <= i && want > j))
				break;
		}
		gen->slots[i] = gen->slots[j];
		i = j;
	}
}

static bool forget(struct flow_socks *socks, uint64_t cookie, bool *passive)
{
	return forget_in(socks, &socks->gens[0], cookie, passive) ||
	       forget_in(socks, &socks->gens[1], cookie, passive);
}

static void swap_ends(struct velo_flow_event *event)
{
	uint8_t addr[16];
	uint64_t bytes;
	uint32_t segs;
	__be16 port;

	memcpy(addr, event->saddr, sizeof(addr));
	memcpy(event->saddr, event->daddr, sizeof(addr));
	memcpy(event->daddr, addr, sizeof(addr));
	port = event->sport;
	event->sport = event->dport;
	event->dport = port;
	bytes = event->bytes_out;
	event->bytes_out = event->bytes_in;
	event->bytes_in = bytes;
	segs = event->segs_out;
	event->segs_out = event->segs_in;
	event->segs_in = segs;
}

void flow_socks_orient(struct flow_socks *socks, struct velo_flow_event *event)
{
	bool passive;

	if (event->proto != 6 || !event->cookie)
		return;
	if (event->kind == VELO_FLOW_START) {
		remember(socks, event->cookie, event->flags & VELO_FLOW_F_PASSIVE);
		return;
	}
	if (event->kind != VELO_FLOW_END)
		return;
	if (!forget(socks, event->cookie, &passive))
		/* No start read for it: the lower port is the server's. */
		passive = ntohs(event->sport) < ntohs(event->dport);
	if (passive)
		swap_ends(event);
}
