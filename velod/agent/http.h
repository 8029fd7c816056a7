/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Answering HTTP requests (http.c): /metrics and /healthz on the listen
 * address, every route (the parts' too, part.h) on the local socket. The
 * server that takes them is http_server.h.
 */
#ifndef VELOD_AGENT_HTTP_H
#define VELOD_AGENT_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "part.h"

/* Queues body (freed by libmicrohttpd when owned) with status: MHD_NO when it can't. */
enum MHD_Result http_respond(struct MHD_Connection *connection, unsigned status,
			     const char *content_type, char *body, size_t len, bool owned);

struct http_server;

/* One of the server's two listeners: the MHD access handler's cls. */
struct http_listener {
	struct MHD_Daemon *daemon;
	struct http_server *server;
	bool private_routes; /* answers /flows and /policy */
};

struct http_server {
	struct agent *agent;
	struct http_listener tcp, local;
	char local_path[108]; /* "" when there is no local socket */
};

/* The parts' private paths: ", /flows or /policy" (last is " or " or " and "). */
void http_private_paths(const struct agent *agent, const char *last, char *buf, size_t len);
/* The MHD access handler (cls: the struct http_listener): one request answered. */
enum MHD_Result http_handle(void *cls, struct MHD_Connection *connection, const char *url,
			    const char *method, const char *version, const char *upload_data,
			    size_t *upload_size, void **state);

#endif
