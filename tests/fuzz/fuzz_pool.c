// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: velo's IPAM allocation files (pool_parse), which every ADD,
 * DEL, CHECK and GC of type "velo" maps from disk. A file that parses must
 * survive a walk of its leases, an allocation and a release in memory.
 */
#include "fuzz_common.h"

#include "ipam/pool.h"

static int count(struct pool *pool, uint32_t idx, void *ctx)
{
	const struct pool_slot *slot = &pool->slots[idx];

	if (!memchr(slot->container_id, '\0', sizeof(slot->container_id)) ||
	    !memchr(slot->ifname, '\0', sizeof(slot->ifname)))
		abort();
	(*(unsigned *)ctx)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pool pool = { .fd = -1 };
	unsigned leased = 0, again = 0;
	char why[128];
	uint32_t idx;
	void *copy;

	if (pool_parse(data, size, true, why, sizeof(why)))
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	pool.map = copy;
	pool.len = size;
	pool.header = copy;
	pool.slots = (struct pool_slot *)(pool.header + 1);
	pool_foreach(&pool, count, &leased);
	if (pool_alloc(&pool, "fuzz", "eth0", NULL, NULL, &idx) == 0) {
		if (!pool_owned(&pool, idx, "fuzz", "eth0") ||
		    pool.header->next >= pool.header->n_slots)
			abort();
		pool_release(&pool, idx);
	} else if (leased != pool.header->n_slots) {
		abort(); /* every slot parsed free or leased: a free one must be found */
	}
	pool_foreach(&pool, count, &again);
	if (again != leased)
		abort();
	free(copy);
	return 0;
}
