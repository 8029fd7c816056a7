/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stable numbers for keys (ids.c): pod label sets, ipBlock prefixes and
 * policies. A key that is still there keeps its number from one computation
 * to the next, so a change rewrites only the map entries it touches; a new
 * key gets a number no key had recently (numbers go round their space before
 * one is used again), so an entry left by a half-done write never names
 * something else.
 */
#ifndef VELO_POLICY_IDS_H
#define VELO_POLICY_IDS_H

#include <stdint.h>

struct velo_pol_id {
	char *key;
	uint32_t id;
};

/* One space of numbers [first, last]; zeroed before the first use. */
struct velo_pol_ids {
	uint32_t first, last;
	uint32_t next; /* the last number handed out */
	unsigned n;
	struct velo_pol_id *items; /* sorted by key */
};

void velo_pol_ids_init(struct velo_pol_ids *ids, uint32_t first, uint32_t last);
/*
 * keys (n, sorted, unique) become the space's keys: ids[i] gets keys[i]'s
 * number; keys not among them are forgotten. 0, -ENOMEM or -ENOSPC (ids
 * unchanged then).
 */
int velo_pol_ids_assign(struct velo_pol_ids *ids, char *const *keys, unsigned n, uint32_t *out);
/* The number of key, or 0. */
uint32_t velo_pol_ids_find(const struct velo_pol_ids *ids, const char *key);
void velo_pol_ids_free(struct velo_pol_ids *ids);

#endif
