/* SPDX-License-Identifier: Apache-2.0 */
/* BPF program cost in sampling windows (sampler.c): BPF stats on only while a window runs. */
#ifndef VELOD_NODE_SAMPLER_H
#define VELOD_NODE_SAMPLER_H

#include <stdint.h>

#include "agent/agent.h"

/* Sampling windows: call step whenever the deadline passed; it never blocks. */
void sampler_init(struct sampler *sampler, const struct agent_config *config);
void sampler_step(struct sampler *sampler, const struct agent_config *config, uint64_t now_ns);
uint64_t sampler_deadline(const struct sampler *sampler, const struct agent_config *config);
void sampler_fini(struct sampler *sampler);

#endif
