/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velod's local socket (local_socket.c): a unix stream socket only root can
 * connect to, for what must not reach the network (/flows, /policy).
 */
#ifndef VELOD_AGENT_LOCAL_SOCKET_H
#define VELOD_AGENT_LOCAL_SOCKET_H

#include <stddef.h>

#include "agent.h"

/*
 * Where it goes: localSocket, else <runDir>/velod.sock (runDir made if missing);
 * "" when off. -ENAMETOOLONG, -EINVAL (not absolute), or mkdir's -errno.
 */
int local_socket_path(const struct agent_config *config, char *path, size_t len);
/*
 * A listening socket at path, mode 0600: the fd, or -errno. A socket left there
 * by an earlier velod is replaced; one that another velod accepts on is
 * -EADDRINUSE, anything else at path -EEXIST.
 */
int local_socket_listen(const char *path, int backlog);

#endif
