// SPDX-License-Identifier: Apache-2.0
/*
 * BPF program cost from sampling windows. Every sampleIntervalSeconds velod
 * holds a BPF_ENABLE_STATS fd for sampleWindowSeconds, reads run_cnt and
 * run_time_ns of velo's programs at both ends and adds the deltas to
 * per-program counters. Stats cost every BPF program on the node ~75 ns a
 * run while they are on, so they are on only during windows; the counters
 * are therefore samples, and velo_bpf_stats_sampled_seconds_total says how
 * much time they cover.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "agent/metrics_text.h"
#include "sampler.h"

#define NS_PER_S 1000000000ull

void sampler_init(struct sampler *sampler, const struct agent_config *config)
{
	memset(sampler, 0, sizeof(*sampler));
	sampler->stats_fd = -1;
	/* The first window opens soon after start so /metrics has data early. */
	sampler->next_start_ns = velo_monotonic_ns() + (config->sample_interval_s ? NS_PER_S : 0);
}

static struct prog_cost *cost_slot(struct sampler *sampler, const struct velo_prog_sample *prog)
{
	struct prog_cost *grown;

	for (unsigned i = 0; i < sampler->n_costs; i++)
		if (!strcmp(sampler->costs[i].name, prog->name) &&
		    !strcmp(sampler->costs[i].type, prog->type))
			return &sampler->costs[i];
	grown = realloc(sampler->costs, (sampler->n_costs + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	sampler->costs = grown;
	grown = &sampler->costs[sampler->n_costs++];
	memset(grown, 0, sizeof(*grown));
	memcpy(grown->name, prog->name, sizeof(grown->name));
	grown->type = prog->type;
	return grown;
}

static void window_open(struct sampler *sampler, const struct agent_config *config, uint64_t now_ns)
{
	int ret;

	sampler->stats_fd = velo_stats_enable();
	if (sampler->stats_fd < 0) {
		pr_warn("sampler: BPF_ENABLE_STATS: %s; no cost metrics this window",
			strerror(-sampler->stats_fd));
		goto err;
	}
	ret = velo_progs_sample(false, &sampler->start);
	if (ret) {
		pr_warn("sampler: list BPF programs: %s", strerror(-ret));
		close(sampler->stats_fd);
		sampler->stats_fd = -1;
		goto err;
	}
	sampler->window_end_ns = now_ns + (uint64_t)(config->sample_window_s * NS_PER_S);
	return;
err:
	sampler->errors++;
	sampler->next_start_ns = now_ns + (uint64_t)config->sample_interval_s * NS_PER_S;
}

static void window_close(struct sampler *sampler, const struct agent_config *config,
			 uint64_t now_ns)
{
	struct velo_prog_set end;
	struct velo_prog_delta *deltas;
	int ret;

	ret = velo_progs_sample(false, &end);
	close(sampler->stats_fd); /* stats off before anything else */
	sampler->stats_fd = -1;
	sampler->next_start_ns += (uint64_t)config->sample_interval_s * NS_PER_S;
	if (sampler->next_start_ns <= now_ns)
		sampler->next_start_ns = now_ns + (uint64_t)config->sample_interval_s * NS_PER_S;
	if (ret) {
		pr_warn("sampler: list BPF programs: %s", strerror(-ret));
		sampler->errors++;
		goto out;
	}
	deltas = calloc(end.n ? end.n : 1, sizeof(*deltas));
	if (!deltas) {
		sampler->errors++;
		velo_progs_free(&end);
		goto out;
	}
	velo_progs_delta(&sampler->start, &end, deltas);
	for (unsigned i = 0; i < end.n; i++) {
		struct prog_cost *cost = cost_slot(sampler, deltas[i].prog);

		if (!cost)
			continue;
		cost->runs += deltas[i].runs;
		cost->run_time_ns += deltas[i].run_time_ns;
	}
	sampler->sampled_seconds += (double)(end.taken_ns - sampler->start.taken_ns) / NS_PER_S;
	sampler->windows++;
	free(deltas);
	velo_progs_free(&end);
out:
	velo_progs_free(&sampler->start);
}

void sampler_step(struct sampler *sampler, const struct agent_config *config, uint64_t now_ns)
{
	if (!config->sample_interval_s)
		return;
	if (sampler->stats_fd >= 0) {
		if (now_ns >= sampler->window_end_ns)
			window_close(sampler, config, now_ns);
	} else if (now_ns >= sampler->next_start_ns) {
		window_open(sampler, config, now_ns);
	}
}

uint64_t sampler_deadline(const struct sampler *sampler, const struct agent_config *config)
{
	if (!config->sample_interval_s)
		return UINT64_MAX;
	return sampler->stats_fd >= 0 ? sampler->window_end_ns : sampler->next_start_ns;
}

void sampler_fini(struct sampler *sampler)
{
	if (sampler->stats_fd >= 0)
		close(sampler->stats_fd);
	velo_progs_free(&sampler->start);
	free(sampler->costs);
	memset(sampler, 0, sizeof(*sampler));
	sampler->stats_fd = -1;
}

char *sampler_metrics(const struct sampler *sampler)
{
	struct metrics_text text = {};

	metrics_header(&text, "velo_bpf_prog_run_count_total", "counter",
		       "Runs of velo's BPF programs seen during sampling windows only.");
	for (unsigned i = 0; i < sampler->n_costs; i++)
		metrics_put(&text, "velo_bpf_prog_run_count_total{prog=\"%s\",type=\"%s\"} %llu\n",
			    sampler->costs[i].name, sampler->costs[i].type,
			    (unsigned long long)sampler->costs[i].runs);
	metrics_header(&text, "velo_bpf_prog_run_seconds_total", "counter",
		       "CPU time velo's BPF programs ran during sampling windows only.");
	for (unsigned i = 0; i < sampler->n_costs; i++)
		metrics_put(&text,
			    "velo_bpf_prog_run_seconds_total{prog=\"%s\",type=\"%s\"} %.9f\n",
			    sampler->costs[i].name, sampler->costs[i].type,
			    (double)sampler->costs[i].run_time_ns / 1e9);
	metrics_header(&text, "velo_bpf_stats_sampled_seconds_total", "counter",
		       "Wall time covered by sampling windows (BPF stats on node-wide).");
	metrics_put(&text, "velo_bpf_stats_sampled_seconds_total %.6f\n", sampler->sampled_seconds);
	metrics_family_value(&text, "velo_bpf_stats_windows_total", "counter",
			     "Sampling windows completed.", sampler->windows);
	metrics_family_value(&text, "velo_bpf_stats_errors_total", "counter",
			     "Sampling windows that could not be taken.", sampler->errors);
	return metrics_text_end(&text);
}
