// SPDX-License-Identifier: Apache-2.0
/*
 * velod's HTTP over libmicrohttpd, driven by velod's main loop (external
 * select mode): handlers run on the one thread that also reconciles, so they
 * share its state without locks. Two listeners, each with its own connection
 * limit: `listen` (TCP, where Prometheus and the kubelet reach /metrics and
 * /healthz) and the local socket (every route; veloctl's). /flows and /policy
 * name every connection and every pod's policy of the node, and NetworkPolicy
 * can't shield node addresses: they stay off TCP unless serveFlowsOnListen.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <cJSON.h>
#include <microhttpd.h>

#include "base/log.h"
#include "datapath/progs.h"
#include "http.h"
#include "local_socket.h"
#include "metrics.h"
#include "part.h"

/* Scrapes and probes; followers (serveFlowsOnListen) take at most FLOWS_MAX_FOLLOWERS. */
#define HTTP_CONNECTION_LIMIT 32
#define LOCAL_CONNECTION_LIMIT 64
#define HTTP_TIMEOUT_S 10 /* no byte either way for this long: the connection is closed */

struct http_server;

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

enum MHD_Result http_respond(struct MHD_Connection *connection, unsigned status,
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

static enum MHD_Result serve_metrics(struct agent *agent, struct MHD_Connection *connection)
{
	char text[128];
	size_t len;
	char *body = metrics_render(agent, &len);

	if (!body) {
		snprintf(text, sizeof(text), "rendering metrics: %s\n", strerror(errno));
		return http_respond(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", text,
				    strlen(text), false);
	}
	return http_respond(connection, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
			    body, len, true);
}

static enum MHD_Result serve_healthz(struct agent *agent, struct MHD_Connection *connection)
{
	char text[512];
	bool healthy = !agent_health(agent, text, sizeof(text));

	return http_respond(connection, healthy ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
			    "text/plain", text, strlen(text), false);
}

/* Every part's paths after these two (part.h). */
static const struct agent_route routes[] = {
	{ "/metrics", false, serve_metrics }, /* per-pod counters: podMetrics turns them off */
	{ "/healthz", false, serve_healthz },
};

/* The route for path, velod's own or a part's; NULL when there is none. */
static const struct agent_route *find_route(const struct agent *agent, const char *path)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (!strcmp(path, routes[i].path))
			return &routes[i];
	for (unsigned i = 0; i < agent->n_parts; i++)
		for (unsigned r = 0; r < agent->parts[i]->n_routes; r++)
			if (!strcmp(path, agent->parts[i]->routes[r].path))
				return &agent->parts[i]->routes[r];
	return NULL;
}

/* The parts' private paths: ", /flows or /policy" (last is " or " or " and "). */
static void private_paths(const struct agent *agent, const char *last, char *buf, size_t len)
{
	const char *paths[16];
	unsigned n = 0;
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < agent->n_parts; i++)
		for (unsigned r = 0; r < agent->parts[i]->n_routes && n < 16; r++)
			if (agent->parts[i]->routes[r].private)
				paths[n++] = agent->parts[i]->routes[r].path;
	/* In name order, whatever the table's: "/flows" before "/policy". */
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && strcmp(paths[j - 1], paths[j]) > 0; j--) {
			const char *swap = paths[j];

			paths[j] = paths[j - 1];
			paths[j - 1] = swap;
		}
	for (unsigned i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i == 0	      ? ", "
					 : i + 1 == n ? last
						      : ", ",
					 paths[i]);
}

/* 403 with where the route is served: {"error": "..."}, as veloctl reads errors. */
static enum MHD_Result refuse_private(struct http_server *server, struct MHD_Connection *connection,
				      const char *path)
{
	char text[512];
	cJSON *json = cJSON_CreateObject();
	enum MHD_Result ret;
	char *body;

	if (server->local_path[0])
		snprintf(text, sizeof(text),
			 "%s is served only on velod's local socket %s (veloctl uses it), not on "
			 "its listen address; serveFlowsOnListen (docs/velod.md) opts in",
			 path, server->local_path);
	else
		snprintf(text, sizeof(text),
			 "%s is served only on velod's local socket, which localSocket \"\" turned "
			 "off; serveFlowsOnListen (docs/velod.md) opts in",
			 path);
	body = json && cJSON_AddStringToObject(json, "error", text) ? cJSON_PrintUnformatted(json)
								    : NULL;
	cJSON_Delete(json);
	if (!body)
		return MHD_NO;
	ret = http_respond(connection, MHD_HTTP_FORBIDDEN, "application/json", body, strlen(body),
			   false);
	cJSON_free(body);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_size, void **state)
{
	struct http_listener *listener = cls;
	const struct agent_route *route;
	char text[512], paths[256] = "";

	(void)version;
	(void)upload_data;
	(void)upload_size;
	(void)state;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		snprintf(text, sizeof(text), "only GET\n");
		return http_respond(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", text,
				    strlen(text), false);
	}
	route = find_route(listener->server->agent, url);
	if (route && route->private && !listener->private_routes)
		return refuse_private(listener->server, connection, url);
	if (route)
		return route->serve(listener->server->agent, connection);
	if (listener->private_routes)
		private_paths(listener->server->agent, " or ", paths, sizeof(paths));
	snprintf(text, sizeof(text), "not found: try /metrics, /healthz%s\n", paths);
	return http_respond(connection, MHD_HTTP_NOT_FOUND, "text/plain", text, strlen(text),
			    false);
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

/* Suspend/resume: /flows?follow=1 waits for flows without blocking the loop. */
#define HTTP_FLAGS (MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME)

static int start_tcp(struct http_server *server, const char *listen)
{
	struct sockaddr_storage addr;
	bool v6;
	int ret;

	ret = parse_listen(listen, &addr, &v6);
	if (ret) {
		pr_err("listen address \"%s\": expected host:port, [v6]:port or :port", listen);
		return ret;
	}
	server->tcp.server = server;
	server->tcp.private_routes = server->agent->config.serve_flows_on_listen;
	server->tcp.daemon =
		MHD_start_daemon(HTTP_FLAGS | (v6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL, handle,
				 &server->tcp, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
				 MHD_OPTION_CONNECTION_LIMIT, HTTP_CONNECTION_LIMIT,
				 MHD_OPTION_CONNECTION_TIMEOUT, HTTP_TIMEOUT_S, MHD_OPTION_END);
	if (!server->tcp.daemon) {
		ret = errno ? errno : EADDRINUSE;
		pr_err("serve HTTP on %s: %s", listen, strerror(ret));
		return -ret;
	}
	if (server->tcp.private_routes)
		pr_warn("serveFlowsOnListen: /flows and /policy answer anyone who reaches %s: "
			"every connection of this node and every pod's policy; NetworkPolicy "
			"can't shield a node's address",
			listen);
	return 0;
}

static int start_local(struct http_server *server)
{
	int fd, ret;

	ret = local_socket_path(&server->agent->config, server->local_path,
				sizeof(server->local_path));
	if (ret) {
		pr_err("localSocket \"%s\": %s", server->local_path,
		       ret == -EINVAL	      ? "not an absolute path"
		       : ret == -ENAMETOOLONG ? "longer than a unix socket path"
					      : strerror(-ret));
		server->local_path[0] = '\0';
		return ret;
	}
	if (!server->local_path[0])
		return 0;
	fd = local_socket_listen(server->local_path, LOCAL_CONNECTION_LIMIT);
	if (fd < 0) {
		pr_err("local socket %s: %s", server->local_path, strerror(-fd));
		server->local_path[0] = '\0';
		return fd;
	}
	server->local.server = server;
	server->local.private_routes = true;
	/* No per-IP limit here: libmicrohttpd refuses addresses it can't key (AF_UNIX). */
	server->local.daemon = MHD_start_daemon(
		HTTP_FLAGS, 0, NULL, NULL, handle, &server->local, MHD_OPTION_LISTEN_SOCKET, fd,
		MHD_OPTION_CONNECTION_LIMIT, LOCAL_CONNECTION_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
		HTTP_TIMEOUT_S, MHD_OPTION_END);
	if (!server->local.daemon) {
		ret = errno ? errno : EINVAL;
		pr_err("serve HTTP on %s: %s", server->local_path, strerror(ret));
		close(fd);
		unlink(server->local_path);
		server->local_path[0] = '\0';
		return -ret;
	}
	return 0;
}

static void http_stop(struct http_server *server)
{
	if (!server)
		return;
	if (server->tcp.daemon)
		MHD_stop_daemon(server->tcp.daemon);
	if (server->local.daemon)
		MHD_stop_daemon(server->local.daemon);
	if (server->local_path[0])
		unlink(server->local_path);
	free(server);
}

/* The one server: velod has one loop. */
static struct http_server *running;

/* Serves config's listen and local socket (either may be off); logs what it serves. */
static int http_start(struct agent *agent)
{
	const char *listen = agent->config.listen;
	char paths[256] = "";
	struct http_server *server;
	int ret;

	server = calloc(1, sizeof(*server));
	if (!server)
		return -errno;
	server->agent = agent;
	ret = listen[0] ? start_tcp(server, listen) : 0;
	if (!ret)
		ret = start_local(server);
	if (ret) {
		http_stop(server);
		return ret;
	}
	if (server->tcp.private_routes)
		private_paths(agent, " and ", paths, sizeof(paths));
	pr_info("HTTP: %s%s%s; %s%s", listen[0] ? listen : "no listen address",
		listen[0] ? " serves /metrics and /healthz" : "", paths,
		server->local_path[0] ? "every route on " : "no local socket", server->local_path);
	running = server;
	return 0;
}

static void add_fds(struct MHD_Daemon *daemon, struct agent_poll *poll)
{
	MHD_socket fd_max = poll->max_fd;
	MHD_UNSIGNED_LONG_LONG timeout;

	if (!daemon ||
	    MHD_get_fdset(daemon, &poll->read, &poll->write, &poll->except, &fd_max) != MHD_YES)
		return;
	poll->max_fd = fd_max;
	if (MHD_get_timeout(daemon, &timeout) == MHD_YES &&
	    (poll->timeout_ms < 0 || (long long)timeout < poll->timeout_ms))
		poll->timeout_ms = (long long)timeout;
}

static void http_poll(struct agent *agent, struct agent_poll *poll)
{
	(void)agent;
	add_fds(running->tcp.daemon, poll);
	add_fds(running->local.daemon, poll);
}

static void http_run(struct agent *agent, struct agent_poll *poll)
{
	(void)agent;
	if (running->tcp.daemon)
		MHD_run_from_select(running->tcp.daemon, &poll->read, &poll->write, &poll->except);
	if (running->local.daemon)
		MHD_run_from_select(running->local.daemon, &poll->read, &poll->write,
				    &poll->except);
}

static void http_end(struct agent *agent)
{
	(void)agent;
	http_stop(running);
	running = NULL;
}

const struct agent_part http_part = {
	.name = "HTTP",
	.start = http_start,
	.fatal = true,
	.poll = http_poll,
	.ready = http_run,
	.stop = http_end,
};
