/* SPDX-License-Identifier: Apache-2.0 */
/* BPF program cost in sampling windows (sampler.c): BPF stats on only while a window runs. */
#ifndef VELOD_NODE_SAMPLER_H
#define VELOD_NODE_SAMPLER_H

#include <stdint.h>

#include "datapath/progs.h"
#include "agent/agent.h"

/* Per program name: what the sampling windows saw. */
struct prog_cost {
	char name[VELO_OBJ_NAME_MAX];
	const char *type;
	uint64_t runs;
	uint64_t run_time_ns;
};

struct sampler {
	int stats_fd; /* held only during a window */
	uint64_t window_end_ns;
	uint64_t next_start_ns;
	struct velo_prog_set start;
	struct prog_cost *costs;
	unsigned n_costs;
	double sampled_seconds; /* total length of finished windows */
	uint64_t windows;
	uint64_t errors;
};

/* Sampling windows: call step whenever the deadline passed; it never blocks. */
void sampler_init(struct sampler *sampler, const struct agent_config *config);
void sampler_step(struct sampler *sampler, const struct agent_config *config, uint64_t now_ns);
uint64_t sampler_deadline(const struct sampler *sampler, const struct agent_config *config);
void sampler_fini(struct sampler *sampler);
/* The windows' series for /metrics (the caller frees); NULL on failure. */
char *sampler_metrics(const struct sampler *sampler);

#endif
