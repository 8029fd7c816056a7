/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal HTTP/1.0 GET (http_get.c), for velod's /healthz and /policy. */
#ifndef VELOCTL_HTTP_GET_H
#define VELOCTL_HTTP_GET_H

/* GET http://agent/path with a short timeout: the status code, or -errno. body may be NULL. */
int ctl_http_get(const char *agent, const char *path, char *body, unsigned len);
/* The same with the whole body (up to 64 MiB) in *body, to free; NULL on error. */
int ctl_http_get_all(const char *agent, const char *path, char **body);

#endif
