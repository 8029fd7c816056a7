/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Counters by label values (velo_drops_total{pod,reason}, velo_flows_total{src,dst,verdict}),
 * bounded: once cap series exist, new label sets count in one series whose first label
 * value is "other", so a node with many pods or peers can't grow /metrics without end.
 * A series that hasn't counted for a while (a gone pod's, an old peer pair's) expires, so
 * churn doesn't fill the cap for good and push every new pod into "other".
 */
#ifndef VELOD_FLOWS_FLOWS_SERIES_H
#define VELOD_FLOWS_FLOWS_SERIES_H

#include <stdbool.h>
#include <stdint.h>

#define FLOW_SERIES_LABELS 3
#define FLOW_SERIES_VALUE_MAX 320

struct flow_series_entry {
	char values[FLOW_SERIES_LABELS][FLOW_SERIES_VALUE_MAX];
	uint64_t count;
	uint64_t hash; /* 0: a free slot */
	uint64_t last_ns; /* the clock when it last counted */
};

struct flow_series {
	struct flow_series_entry *slots; /* open addressing, twice the cap */
	unsigned n_slots, n, cap;
	struct flow_series_entry other;
	bool other_used;
	uint64_t now_ns; /* the caller's clock (flow_series_clock) */
};

/* 0 or -ENOMEM. */
int flow_series_init(struct flow_series *series, unsigned cap);
void flow_series_free(struct flow_series *series);
/* Counts one for the label values (NULL ones are ""). */
void flow_series_add(struct flow_series *series, const char *const values[FLOW_SERIES_LABELS]);
/* As flow_series_add, n at once (a sampled drop stands for n). */
void flow_series_add_n(struct flow_series *series, const char *const values[FLOW_SERIES_LABELS],
		       uint64_t n);
/* The time series counted from now on count at (monotonic ns). */
void flow_series_clock(struct flow_series *series, uint64_t now_ns);
/*
 * Series (and "other") that last counted more than idle_ns before now_ns go:
 * their labels leave /metrics, their slots are free. Returns how many went.
 */
unsigned flow_series_expire(struct flow_series *series, uint64_t now_ns, uint64_t idle_ns);
/* Calls fn for every series with a count, "other" last. */
void flow_series_foreach(const struct flow_series *series,
			 void (*fn)(const struct flow_series_entry *entry, void *ctx), void *ctx);

#endif
