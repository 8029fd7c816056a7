/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which side each open TCP socket of an opted-in pod is, by socket cookie:
 * the program writes a socket's START client -> server with the side in its
 * flags, and its END in the socket's own view (bpf/flows.bpf.c). velod
 * remembers the side from the START and turns the END the same way, then
 * forgets the socket. Bounded (VELO_MAX_FLOW_TCP sockets, in two generations:
 * the oldest half is forgotten when the newer one fills up). An END whose
 * START was forgotten or lost is turned by a rule: the end with the lower
 * port is the server (on a tie, the socket's own end is the client).
 */
#ifndef VELOD_FLOWS_FLOWS_SOCKS_H
#define VELOD_FLOWS_FLOWS_SOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/lib/velo_flow.h"

struct flow_socks;

/* NULL with errno; cap (at least 2) sockets at most, half of them in each generation. */
struct flow_socks *flow_socks_new(uint32_t cap);
void flow_socks_free(struct flow_socks *socks);
/* A TCP START remembers its socket's side; a TCP END is turned client -> server. */
void flow_socks_orient(struct flow_socks *socks, struct velo_flow_event *event);
/* Sockets remembered now. */
uint32_t flow_socks_count(const struct flow_socks *socks);

#endif
