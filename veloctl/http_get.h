/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A minimal HTTP/1.0 GET (http_get.c), for velod's /healthz and /policy. agent
 * is "host:port", "[v6]:port", or a unix socket's absolute path.
 */
#ifndef VELOCTL_HTTP_GET_H
#define VELOCTL_HTTP_GET_H

/* A connected stream socket to agent (its connect waits 2 s at most): the fd, or -errno. */
int ctl_http_connect(const char *agent);
/* What a request's Host header says for agent. */
const char *ctl_http_host(const char *agent);
/* GET http://agent/path with a short timeout: the status code, or -errno. body may be NULL. */
int ctl_http_get(const char *agent, const char *path, char *body, unsigned len);
/* The same with the whole body (up to 64 MiB) in *body, to free; NULL on error. */
int ctl_http_get_all(const char *agent, const char *path, char **body);

#endif
