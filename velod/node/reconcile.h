/* SPDX-License-Identifier: Apache-2.0 */
/* Reconciliation (reconcile.c): releasing endpoints whose pod vanished without a DEL. */
#ifndef VELOD_NODE_RECONCILE_H
#define VELOD_NODE_RECONCILE_H

#include "agent/agent.h"

/* One reconciliation pass over every configured network. */
void reconcile_run(struct agent *agent);

#endif
