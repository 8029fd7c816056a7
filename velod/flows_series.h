/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Counters by label values (velo_drops_total{pod,reason}, velo_flows_total{src,dst,verdict}),
 * bounded: once cap series exist, new label sets count in one series whose first label
 * value is "other", so a node with many pods or peers can't grow /metrics without end.
 */
#ifndef VELOD_FLOWS_SERIES_H
#define VELOD_FLOWS_SERIES_H

#include <stdbool.h>
#include <stdint.h>

#define FLOW_SERIES_LABELS 3
#define FLOW_SERIES_VALUE_MAX 320

struct flow_series_entry {
	char values[FLOW_SERIES_LABELS][FLOW_SERIES_VALUE_MAX];
	uint64_t count;
	uint64_t hash; /* 0: a free slot */
};

struct flow_series {
	struct flow_series_entry *slots; /* open addressing, twice the cap */
	unsigned n_slots, n, cap;
	struct flow_series_entry other;
	bool other_used;
};

/* 0 or -ENOMEM. */
int flow_series_init(struct flow_series *series, unsigned cap);
void flow_series_free(struct flow_series *series);
/* Counts one for the label values (NULL ones are ""). */
void flow_series_add(struct flow_series *series, const char *const values[FLOW_SERIES_LABELS]);
/* As flow_series_add, n at once (a sampled drop stands for n). */
void flow_series_add_n(struct flow_series *series, const char *const values[FLOW_SERIES_LABELS],
		       uint64_t n);
/* Calls fn for every series with a count, "other" last. */
void flow_series_foreach(const struct flow_series *series,
			 void (*fn)(const struct flow_series_entry *entry, void *ctx), void *ctx);

#endif
