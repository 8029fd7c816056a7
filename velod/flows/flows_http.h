/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /flows[?since=UNIX_SECONDS][&follow=1]: the flows velod holds as JSON
 * lines, oldest first; with follow the response stays open and carries each
 * new flow as it is read. A follower waits suspended (libmicrohttpd's
 * suspend/resume), so the loop never blocks on it and an idle one costs nothing
 * but an empty line every 5 s. At most 16 follow at once; more are answered 503.
 */
#ifndef VELOD_FLOWS_FLOWS_HTTP_H
#define VELOD_FLOWS_FLOWS_HTTP_H

#include <stdint.h>

#include <microhttpd.h>

#include "agent/agent.h"

enum MHD_Result flows_http(struct agent *agent, struct MHD_Connection *connection);
/* New flows were read: wakes the followers. */
void flows_http_wake(void);
/* When a waiting follower is next due its heartbeat (monotonic ns); UINT64_MAX: none waits. */
uint64_t flows_http_deadline(void);
/* Resumes the followers whose heartbeat is due. */
void flows_http_step(uint64_t now_ns);
/* Before the server stops: ends every follower's stream. */
void flows_http_stop(void);

#endif
