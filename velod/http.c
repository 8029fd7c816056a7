// SPDX-License-Identifier: Apache-2.0
/*
 * /metrics and /healthz over libmicrohttpd, driven by velod's main loop
 * (external select mode): handlers run on the one thread that also
 * reconciles, so they share its state without locks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

#include <microhttpd.h>

#include "base/log.h"
#include "flows_http.h"
#include "http.h"
#include "metrics.h"
#include "policy.h"

#define HTTP_CONNECTION_LIMIT 32
#define HTTP_TIMEOUT_S 10

struct http_server {
	struct MHD_Daemon *daemon;
	struct agent *agent;
};

static enum MHD_Result respond(struct MHD_Connection *connection, unsigned status,
			       const char *content_type, char *body, size_t len, bool owned)
{
	struct MHD_Response *response;
	enum MHD_Result ret;

	response = MHD_create_response_from_buffer(
		len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
	if (!response) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	ret = MHD_queue_response(connection, status, response);
	MHD_destroy_response(response);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_size, void **state)
{
	struct http_server *server = cls;
	char text[512];
	size_t len;
	char *body;

	(void)version;
	(void)upload_data;
	(void)upload_size;
	(void)state;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		snprintf(text, sizeof(text), "only GET\n");
		return respond(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", text,
			       strlen(text), false);
	}
	if (!strcmp(url, "/metrics")) {
		body = metrics_render(server->agent, &len);
		if (!body) {
			snprintf(text, sizeof(text), "rendering metrics: %s\n", strerror(errno));
			return respond(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
				       text, strlen(text), false);
		}
		return respond(connection, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
			       body, len, true);
	}
	if (!strcmp(url, "/flows"))
		return flows_http(server->agent, connection);
	if (!strcmp(url, "/healthz")) {
		bool healthy = !agent_health(server->agent, text, sizeof(text));

		return respond(connection, healthy ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
			       "text/plain", text, strlen(text), false);
	}
	if (!strcmp(url, "/policy")) {
		const char *pod =
			MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "pod");
		unsigned status;

		body = policy_http(&server->agent->policy, pod, &status);
		if (!body)
			return MHD_NO;
		return respond(connection, status, "application/json", body, strlen(body), true);
	}
	snprintf(text, sizeof(text), "not found: try /metrics, /healthz or /policy\n");
	return respond(connection, MHD_HTTP_NOT_FOUND, "text/plain", text, strlen(text), false);
}

/* "host:port", "[v6]:port" or ":port" (all addresses) into a sockaddr. */
static int parse_listen(const char *listen, struct sockaddr_storage *addr, bool *v6)
{
	char host[128];
	const char *port_text;
	char *end;
	long port;

	memset(addr, 0, sizeof(*addr));
	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');

		if (!close || close[1] != ':' || (size_t)(close - listen - 1) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(close - listen - 1), listen + 1);
		port_text = close + 2;
	} else {
		const char *colon = strrchr(listen, ':');

		if (!colon || (size_t)(colon - listen) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
		port_text = colon + 1;
	}
	errno = 0;
	port = strtol(port_text, &end, 10);
	if (errno || *end || end == port_text || port < 1 || port > 65535)
		return -EINVAL;
	*v6 = strchr(host, ':') != NULL;
	if (*v6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)addr;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		return inet_pton(AF_INET6, host, &in6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	struct sockaddr_in *in4 = (struct sockaddr_in *)addr;

	in4->sin_family = AF_INET;
	in4->sin_port = htons((uint16_t)port);
	if (!host[0])
		return 0; /* INADDR_ANY */
	return inet_pton(AF_INET, host, &in4->sin_addr) == 1 ? 0 : -EINVAL;
}

struct http_server *http_start(struct agent *agent, const char *listen)
{
	struct sockaddr_storage addr;
	struct http_server *server;
	/* Suspend/resume: /flows?follow=1 waits for flows without blocking the loop. */
	unsigned flags = MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
	bool v6;
	int ret;

	ret = parse_listen(listen, &addr, &v6);
	if (ret) {
		pr_err("listen address \"%s\": expected host:port, [v6]:port or :port", listen);
		errno = -ret;
		return NULL;
	}
	server = calloc(1, sizeof(*server));
	if (!server)
		return NULL;
	server->agent = agent;
	if (v6)
		flags |= MHD_USE_IPv6;
	server->daemon = MHD_start_daemon(
		flags, 0, NULL, NULL, handle, server, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&addr, MHD_OPTION_CONNECTION_LIMIT, HTTP_CONNECTION_LIMIT,
		MHD_OPTION_CONNECTION_TIMEOUT, HTTP_TIMEOUT_S, MHD_OPTION_END);
	if (!server->daemon) {
		ret = errno ? errno : EADDRINUSE;
		pr_err("serve HTTP on %s: %s", listen, strerror(ret));
		free(server);
		errno = ret;
		return NULL;
	}
	return server;
}

int http_fdset(struct http_server *server, void *read_set, void *write_set, void *except_set,
	       int max_fd, long long *timeout_ms)
{
	MHD_socket fd_max = max_fd;
	MHD_UNSIGNED_LONG_LONG timeout;

	*timeout_ms = -1;
	if (!server)
		return max_fd;
	if (MHD_get_fdset(server->daemon, read_set, write_set, except_set, &fd_max) != MHD_YES)
		return max_fd;
	if (MHD_get_timeout(server->daemon, &timeout) == MHD_YES)
		*timeout_ms = (long long)timeout;
	return fd_max;
}

void http_run(struct http_server *server, void *read_set, void *write_set, void *except_set)
{
	if (server)
		MHD_run_from_select(server->daemon, read_set, write_set, except_set);
}

void http_stop(struct http_server *server)
{
	if (!server)
		return;
	flows_http_stop();
	MHD_stop_daemon(server->daemon);
	free(server);
}
