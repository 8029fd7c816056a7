// SPDX-License-Identifier: Apache-2.0
/*
 * Answering velod's HTTP requests (http.h): velod's own routes (/metrics,
 * /healthz) and the parts', found by path; a private route (/flows, /policy)
 * asked on a listener that doesn't serve it gets 403 saying where it is served.
 * The listeners themselves are http_server.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <microhttpd.h>

#include "http.h"
#include "metrics.h"
#include "part.h"

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

void http_private_paths(const struct agent *agent, const char *last, char *buf, size_t len)
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

enum MHD_Result http_handle(void *cls, struct MHD_Connection *connection, const char *url,
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
		http_private_paths(listener->server->agent, " or ", paths, sizeof(paths));
	snprintf(text, sizeof(text), "not found: try /metrics, /healthz%s\n", paths);
	return http_respond(connection, MHD_HTTP_NOT_FOUND, "text/plain", text, strlen(text),
			    false);
}
