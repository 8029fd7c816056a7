/* SPDX-License-Identifier: Apache-2.0 */
/* Reconciliation (reconcile.c): releasing endpoints whose pod vanished without a DEL. */
#ifndef VELOD_RECONCILE_H
#define VELOD_RECONCILE_H

#include "agent.h"

/* One reconciliation pass over every configured network. */
void reconcile_run(struct agent *agent);

/* Each network velod looks after: the configured ones, else every dir under stateDir. */
typedef int (*agent_network_fn)(const char *network, void *ctx);
int agent_foreach_network(const struct agent_config *config, agent_network_fn fn, void *ctx);

/* The wall clock (CLOCK_REALTIME) in seconds. */
double agent_now_unix(void);

#endif
