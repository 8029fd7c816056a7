// SPDX-License-Identifier: Apache-2.0
/* Bounded counters by label values (flows_series.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flows_series.h"

/* FNV-1a over the values with a separator; never 0 (0 marks a free slot). */
static uint64_t hash_values(const char *const values[FLOW_SERIES_LABELS])
{
	uint64_t hash = 0xcbf29ce484222325ull;

	for (unsigned i = 0; i < FLOW_SERIES_LABELS; i++) {
		for (const char *c = values[i] ? values[i] : ""; *c; c++)
			hash = (hash ^ (uint8_t)*c) * 0x100000001b3ull;
		hash = (hash ^ 0xff) * 0x100000001b3ull;
	}
	return hash ? hash : 1;
}

static bool same(const struct flow_series_entry *entry, const char *const values[])
{
	for (unsigned i = 0; i < FLOW_SERIES_LABELS; i++)
		if (strncmp(entry->values[i], values[i] ? values[i] : "", FLOW_SERIES_VALUE_MAX))
			return false;
	return true;
}

static void set_values(struct flow_series_entry *entry, const char *const values[])
{
	for (unsigned i = 0; i < FLOW_SERIES_LABELS; i++)
		snprintf(entry->values[i], FLOW_SERIES_VALUE_MAX, "%s", values[i] ? values[i] : "");
}

int flow_series_init(struct flow_series *series, unsigned cap)
{
	memset(series, 0, sizeof(*series));
	series->cap = cap;
	series->n_slots = cap ? cap * 2 : 1;
	series->slots = calloc(series->n_slots, sizeof(*series->slots));
	return series->slots ? 0 : -ENOMEM;
}

void flow_series_free(struct flow_series *series)
{
	free(series->slots);
	series->slots = NULL;
}

void flow_series_add(struct flow_series *series, const char *const values[FLOW_SERIES_LABELS])
{
	flow_series_add_n(series, values, 1);
}

void flow_series_add_n(struct flow_series *series, const char *const values[FLOW_SERIES_LABELS],
		       uint64_t n)
{
	uint64_t hash = hash_values(values);
	unsigned i = (unsigned)(hash % series->n_slots);

	for (unsigned probes = 0; probes < series->n_slots; probes++) {
		struct flow_series_entry *entry = &series->slots[i];

		if (entry->hash == hash && same(entry, values)) {
			entry->count += n;
			return;
		}
		if (!entry->hash) {
			if (series->n >= series->cap)
				break;
			entry->hash = hash;
			set_values(entry, values);
			entry->count = n;
			series->n++;
			return;
		}
		i = (i + 1) % series->n_slots;
	}
	if (!series->other_used) {
		const char *other[FLOW_SERIES_LABELS] = { "other" };

		set_values(&series->other, other);
		series->other_used = true;
	}
	series->other.count += n;
}

void flow_series_foreach(const struct flow_series *series,
			 void (*fn)(const struct flow_series_entry *entry, void *ctx), void *ctx)
{
	for (unsigned i = 0; i < series->n_slots; i++)
		if (series->slots[i].hash)
			fn(&series->slots[i], ctx);
	if (series->other_used)
		fn(&series->other, ctx);
}
