// SPDX-License-Identifier: Apache-2.0
/* Stable numbers for keys (ids.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "policy/ids.h"

void velo_pol_ids_init(struct velo_pol_ids *ids, uint32_t first, uint32_t last)
{
	memset(ids, 0, sizeof(*ids));
	ids->first = first;
	ids->last = last;
	ids->next = last; /* the first number handed out is first */
}

static const struct velo_pol_id *find(const struct velo_pol_ids *ids, const char *key)
{
	unsigned lo = 0, hi = ids->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		int cmp = strcmp(key, ids->items[mid].key);

		if (!cmp)
			return &ids->items[mid];
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

uint32_t velo_pol_ids_find(const struct velo_pol_ids *ids, const char *key)
{
	const struct velo_pol_id *item = find(ids, key);

	return item ? item->id : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int velo_pol_ids_assign(struct velo_pol_ids *ids, char *const *keys, unsigned n, uint32_t *out)
{
	uint64_t space = (uint64_t)ids->last - ids->first + 1;
	struct velo_pol_id *items = calloc(n ? n : 1, sizeof(*items));
	uint32_t *kept = calloc(n ? n : 1, sizeof(*kept)), next = ids->next;
	unsigned n_kept = 0;

	if (!items || !kept)
		goto nomem;
	if (n > space) {
		free(items);
		free(kept);
		return -ENOSPC;
	}
	for (unsigned i = 0; i < n; i++) {
		out[i] = velo_pol_ids_find(ids, keys[i]);
		if (out[i])
			kept[n_kept++] = out[i];
	}
	qsort(kept, n_kept, sizeof(*kept), cmp_u32);
	for (unsigned i = 0; i < n; i++) {
		if (out[i])
			continue;
		/* The next number after the last handed out that no kept key has. */
		do
			next = next >= ids->last ? ids->first : next + 1;
		while (bsearch(&next, kept, n_kept, sizeof(*kept), cmp_u32));
		out[i] = next;
	}
	for (unsigned i = 0; i < n; i++) {
		items[i].id = out[i];
		items[i].key = strdup(keys[i]);
		if (!items[i].key) {
			for (unsigned j = 0; j < i; j++)
				free(items[j].key);
			goto nomem;
		}
	}
	free(kept);
	for (unsigned i = 0; i < ids->n; i++)
		free(ids->items[i].key);
	free(ids->items);
	ids->items = items;
	ids->n = n;
	ids->next = next;
	return 0;
nomem:
	free(items);
	free(kept);
	return -ENOMEM;
}

void velo_pol_ids_free(struct velo_pol_ids *ids)
{
	for (unsigned i = 0; i < ids->n; i++)
		free(ids->items[i].key);
	free(ids->items);
	ids->items = NULL;
	ids->n = 0;
}
