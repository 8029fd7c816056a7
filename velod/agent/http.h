/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP server (http.c: libmicrohttpd, driven from the main loop: velod is
 * single-threaded): /metrics and /healthz on the listen address, every route
 * (the parts' too, part.h) on the local socket.
 */
#ifndef VELOD_AGENT_HTTP_H
#define VELOD_AGENT_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "part.h"

/* Serves config's listen and the local socket; fatal when it can't. */
extern const struct agent_part http_part;

/* Queues body (freed by libmicrohttpd when owned) with status: MHD_NO when it can't. */
enum MHD_Result http_respond(struct MHD_Connection *connection, unsigned status,
			     const char *content_type, char *body, size_t len, bool owned);

#endif
