/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP server (http_server.c: libmicrohttpd, driven from the main loop:
 * velod is single-threaded): its listeners on config's listen address and the
 * local socket, answering with http.h.
 */
#ifndef VELOD_AGENT_HTTP_SERVER_H
#define VELOD_AGENT_HTTP_SERVER_H

#include "part.h"

/* Serves config's listen and the local socket; fatal when it can't. */
extern const struct agent_part http_part;

#endif
