// SPDX-License-Identifier: Apache-2.0
/* The socket short-circuit's outcome names (sockmap_stats.h): defined once, used everywhere. */
#include "datapath/sockmap_stats.h"

const char *const velo_sm_stat_names[VELO_SM_STAT_MAX] = {
	[VELO_SM_STAT_INSERT] = "insert",
	[VELO_SM_STAT_NOT_POD] = "not_pod",
	[VELO_SM_STAT_PEER_NOT_POD] = "peer_not_pod",
	[VELO_SM_STAT_INSERT_FAIL] = "insert_fail",
	[VELO_SM_STAT_REDIRECT] = "redirect",
	[VELO_SM_STAT_PASS_FIRST] = "pass_first",
	[VELO_SM_STAT_PASS] = "pass",
	[VELO_SM_STAT_REDIRECT_LOST] = "redirect_lost",
	[VELO_SM_STAT_UNPAIRED] = "unpaired",
};
_Static_assert(VELO_SM_STAT_UNPAIRED + 1 == VELO_SM_STAT_MAX, "name every sockmap outcome");
