/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velo's BPF programs and maps as the kernel lists them (by name prefix
 * "velo_"), and their cost counters. Shared by veloctl and velod.
 *
 * The kernel counts run_cnt/run_time_ns only while BPF stats are on, and
 * they are on node-wide while anyone holds a BPF_ENABLE_STATS fd (or the
 * kernel.bpf_stats_enabled sysctl is set). Every BPF program on the node
 * then pays ~75 ns a run, so velo holds the fd only for sampling windows and
 * reports deltas over the window, never the raw counters.
 */
#ifndef VELO_DATAPATH_PROGS_H
#define VELO_DATAPATH_PROGS_H

#include <stdbool.h>
#include <stdint.h>

#define VELO_OBJ_PREFIX "velo_"
#define VELO_OBJ_NAME_MAX 16 /* BPF_OBJ_NAME_LEN */

struct velo_prog_sample {
	uint32_t id;
	char name[VELO_OBJ_NAME_MAX];
	const char *type; /* libbpf's name for the program type; static */
	uint64_t run_cnt;
	uint64_t run_time_ns;
};

struct velo_prog_set {
	struct velo_prog_sample *progs;
	unsigned n;
	uint64_t taken_ns; /* CLOCK_MONOTONIC when sampled */
};

/* One program's cost over a window (end - start; a program new in the window starts at 0). */
struct velo_prog_delta {
	const struct velo_prog_sample *prog; /* into the end set */
	uint64_t runs;
	uint64_t run_time_ns;
};

struct velo_map_entry {
	uint32_t id;
	char name[VELO_OBJ_NAME_MAX];
	const char *type;
	uint32_t max_entries;
	uint32_t key_size;
	uint32_t value_size;
	long long entries; /* -1 when the map type can't be iterated */
};

/* Every loaded program named velo_* (all of them when all is true). */
int velo_progs_sample(bool all, struct velo_prog_set *out);
void velo_progs_free(struct velo_prog_set *set);
/* Deltas for every program of end; out has end->n slots. Counter resets count from 0. */
void velo_progs_delta(const struct velo_prog_set *start, const struct velo_prog_set *end,
		      struct velo_prog_delta *out);

/* Every map named velo_*, with its fill counted by iterating keys (capped at max_entries). */
int velo_maps_list(struct velo_map_entry **out, unsigned *n);

/* Turns BPF run-time stats on while the returned fd is open; -errno on failure. */
int velo_stats_enable(void);
/*
 * The kernel.bpf_stats_enabled sysctl: 1, 0, or -errno. (It shows only the
 * sysctl; other processes' BPF_ENABLE_STATS fds are invisible from here.)
 */
int velo_stats_active(void);

uint64_t velo_monotonic_ns(void);

#endif
