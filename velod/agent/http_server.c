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

#include <microhttpd.h>

#include "base/log.h"
#include "http.h"
#include "http_server.h"
#include "local_socket.h"
#include "part.h"

/* Scrapes and probes; followers (serveFlowsOnListen) take at most FLOWS_MAX_FOLLOWERS. */
#define HTTP_CONNECTION_LIMIT 32
#define LOCAL_CONNECTION_LIMIT 64
#define HTTP_TIMEOUT_S 10 /* no byte either way for this long: the connection is closed */

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
		MHD_start_daemon(HTTP_FLAGS | (v6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL, http_handle,
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
		HTTP_FLAGS, 0, NULL, NULL, http_handle, &server->local, MHD_OPTION_LISTEN_SOCKET,
		fd, MHD_OPTION_CONNECTION_LIMIT, LOCAL_CONNECTION_LIMIT,
		MHD_OPTION_CONNECTION_TIMEOUT, HTTP_TIMEOUT_S, MHD_OPTION_END);
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
		http_private_paths(agent, " and ", paths, sizeof(paths));
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
