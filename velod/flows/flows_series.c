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
			entry->last_ns = series->now_ns;
			return;
		}
		if (!entry->hash) {
			if (series->n >= series->cap)
				break;
			entry->hash = hash;
			set_values(entry, values);
			entry->count = n;
			entry->last_ns = series->now_ns;
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
	series->other.last_ns = series->now_ns;
}

void flow_series_clock(struct flow_series *series, uint64_t now_ns)
{
	series->now_ns = now_ns;
}

static bool idle(const struct flow_series_entry *entry, uint64_t now_ns, uint64_t idle_ns)
{
	return now_ns > entry->last_ns && now_ns - entry->last_ns > idle_ns;
}

/* Puts entry back where a lookup finds it (open addressing: the table is rebuilt). */
static void reinsert(struct flow_series *series, const struct flow_series_entry *entry)
{
	unsigned i = (unsigned)(entry->hash % series->n_slots);

	while (series->slots[i].hash)
		i = (i + 1) % series->n_slots;
	series->slots[i] = *entry;
}

unsigned flow_series_expire(struct flow_series *series, uint64_t now_ns, uint64_t idle_ns)
{
	unsigned gone = 0, kept = 0, other = 0;

	if (series->other_used && idle(&series->other, now_ns, idle_ns)) {
		memset(&series->other, 0, sizeof(series->other));
		series->other_used = false;
		other = 1;
	}
	for (unsigned i = 0; i < series->n_slots; i++)
		gone += series->slots[i].hash && idle(&series->slots[i], now_ns, idle_ns);
	if (!gone)
		return other;
	/* Live entries packed to the front, then put back by hash (no tombstones). */
	for (unsigned i = 0; i < series->n_slots; i++) {
		if (!series->slots[i].hash || idle(&series->slots[i], now_ns, idle_ns))
			continue;
		if (kept != i)
			series->slots[kept] = series->slots[i];
		kept++;
	}
	for (unsigned i = kept; i < series->n_slots; i++)
		memset(&series->slots[i], 0, sizeof(series->slots[i]));
	for (unsigned i = 0; i < kept; i++) {
		struct flow_series_entry entry = series->slots[i];

		memset(&series->slots[i], 0, sizeof(series->slots[i]));
		reinsert(series, &entry);
	}
	series->n = kept;
	return gone + other;
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
