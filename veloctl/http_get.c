// SPDX-License-Identifier: Apache-2.0
/*
 * A minimal HTTP/1.0 GET for velod's /healthz and /policy, over TCP or velod's
 * local socket: veloctl needs nothing more.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "http_get.h"

#define HTTP_TIMEOUT_MS 2000
#define HTTP_MAX_BODY (64u << 20)

/* Splits "host:port" or "[v6]:port" into host and port. */
static int split_address(const char *agent, char *host, size_t host_len, char *port,
			 size_t port_len)
{
	const char *colon;
	size_t len;

	if (agent[0] == '[') {
		const char *close = strchr(agent, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		len = (size_t)(close - agent - 1);
		if (len >= host_len)
			return -EINVAL;
		memcpy(host, agent + 1, len);
		colon = close + 1;
	} else {
		colon = strrchr(agent, ':');
		if (!colon)
			return -EINVAL;
		len = (size_t)(colon - agent);
		if (len >= host_len)
			return -EINVAL;
		memcpy(host, agent, len);
	}
	host[len] = '\0';
	if (!host[0])
		snprintf(host, host_len, "127.0.0.1");
	if (strlen(colon + 1) >= port_len || !colon[1])
		return -EINVAL;
	snprintf(port, port_len, "%s", colon + 1);
	return 0;
}

static int wait_fd(int fd, short events)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n = poll(&pfd, 1, HTTP_TIMEOUT_MS);

	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

static int connect_local(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, ret;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A unix connect doesn't wait on a network: blocking is fine, and the reads poll. */
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

static int connect_tcp(const char *agent)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *list, *ai;
	char host[256], port[16];
	int ret, fd = -ENOENT;

	ret = split_address(agent, host, sizeof(host), port, sizeof(port));
	if (ret)
		return ret;
	if (getaddrinfo(host, port, &hints, &list))
		return -EHOSTUNREACH;
	for (ai = list; ai; ai = ai->ai_next) {
		int err = 0;
		socklen_t len = sizeof(err);

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0) {
			fd = -errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS)
			err = errno;
		else if ((ret = wait_fd(fd, POLLOUT)))
			err = -ret;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
			err = errno;
		if (!err)
			break;
		close(fd);
		fd = -err;
	}
	freeaddrinfo(list);
	return fd;
}

const char *ctl_http_host(const char *agent)
{
	return agent[0] == '/' ? "localhost" : agent;
}

int ctl_http_connect(const char *agent)
{
	return agent[0] == '/' ? connect_local(agent) : connect_tcp(agent);
}

int ctl_http_get_all(const char *agent, const char *path, char **body)
{
	char request[512];
	size_t used = 0, size = 8192;
	char *response = malloc(size), *start;
	int fd, ret, status;

	*body = NULL;
	if (!response)
		return -ENOMEM;
	fd = ctl_http_connect(agent);
	if (fd < 0) {
		free(response);
		return fd;
	}
	snprintf(request, sizeof(request), "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path,
		 ctl_http_host(agent));
	if (send(fd, request, strlen(request), MSG_NOSIGNAL) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (used == size - 1) {
			char *bigger = size < HTTP_MAX_BODY ? realloc(response, size * 2) : NULL;

			if (!bigger) {
				ret = -EFBIG;
				goto out;
			}
			response = bigger;
			size *= 2;
		}
		ret = wait_fd(fd, POLLIN);
		if (ret)
			goto out;
		n = recv(fd, response + used, size - 1 - used, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	response[used] = '\0';
	if (sscanf(response, "HTTP/%*d.%*d %d", &status) != 1) {
		ret = -EPROTO;
		goto out;
	}
	start = strstr(response, "\r\n\r\n");
	*body = strdup(start ? start + 4 : "");
	ret = *body ? status : -ENOMEM;
out:
	free(response);
	close(fd);
	return ret;
}

int ctl_http_get(const char *agent, const char *path, char *body, unsigned len)
{
	char *all;
	int status = ctl_http_get_all(agent, path, &all);

	if (status >= 0 && body && len)
		snprintf(body, len, "%s", all);
	free(all);
	return status;
}
