/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The names of the socket short-circuit's outcome counters (velo_smstat_v2),
 * one vocabulary for velod's /metrics labels and veloctl's counters
 * (docs/sockmap.md, "Counters").
 */
#ifndef VELO_DATAPATH_SOCKMAP_STATS_H
#define VELO_DATAPATH_SOCKMAP_STATS_H

#include "bpf/lib/velo_sockmap.h"

/* snake_case, indexed by enum velo_sm_stat. */
extern const char *const velo_sm_stat_names[VELO_SM_STAT_MAX];

#endif
