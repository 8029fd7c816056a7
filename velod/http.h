/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP server (http.c: libmicrohttpd, driven from the main loop: velod is
 * single-threaded): /metrics and /healthz on the listen address, every route
 * on the local socket.
 */
#ifndef VELOD_HTTP_H
#define VELOD_HTTP_H

#include "agent.h"

struct http_server;
/* Serves config's listen and local socket (either may be off); NULL with errno. */
struct http_server *http_start(struct agent *agent);
/* Adds the server's fds to sets; returns the highest fd and its timeout (ms, -1 none). */
int http_fdset(struct http_server *server, void *read_set, void *write_set, void *except_set,
	       int max_fd, long long *timeout_ms);
void http_run(struct http_server *server, void *read_set, void *write_set, void *except_set);
void http_stop(struct http_server *server);

#endif
