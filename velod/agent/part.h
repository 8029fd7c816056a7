/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seam for velod's parts (part.c: starting, stopping, helpers). Each part (the reaper, the
 * HTTP server, routing, Services, NetworkPolicy, flow events, ...) fills
 * one of these in its own folder; velod/parts.c lists them all. main.c starts
 * them in table order, polls, steps and asks each for its deadline every turn,
 * and stops them in reverse order. /metrics and /healthz ask every part in
 * table order; the HTTP server serves every part's routes. Any hook may be NULL.
 */
#ifndef VELOD_AGENT_PART_H
#define VELOD_AGENT_PART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/select.h>

#include <microhttpd.h>

#include "agent.h"

/* What the loop waits on for one turn: parts add their fds and timeouts. */
struct agent_poll {
	fd_set read, write, except;
	int max_fd;
	long long timeout_ms; /* -1: none; a part's deadline() is the usual way to wake up */
};

/* A path a part answers on the HTTP server (agent/http.c). */
struct agent_route {
	const char *path;
	/* Per-pod or per-connection answers: the local socket only, unless serveFlowsOnListen. */
	bool private;
	enum MHD_Result (*serve)(struct agent *agent, struct MHD_Connection *connection);
};

struct agent_part {
	const char *name; /* in the log line when it does not start */
	/* 0, or -errno after logging why: fatal ends velod, else it runs on without the part. */
	int (*start)(struct agent *agent);
	bool fatal;
	/* Before waiting: the part's fds (agent_poll_read()) and timeouts. */
	void (*poll)(struct agent *agent, struct agent_poll *poll);
	/* After waiting, in reverse table order: a part's new events reach the parts started
	 * before it (the HTTP server) within the same turn. */
	void (*ready)(struct agent *agent, struct agent_poll *poll);
	/* Every turn, before waiting: the part's timed and watch-driven work. */
	void (*step)(struct agent *agent, uint64_t now_ns);
	/* When step next has work (monotonic ns); UINT64_MAX: only when an fd wakes it. */
	uint64_t (*deadline)(const struct agent *agent);
	/* The part's /metrics text (allocated; the caller frees) or NULL. */
	char *(*metrics)(const struct agent *agent);
	/* /healthz: 0, or -errno with the reason in buf; the first part that isn't ready answers. */
	int (*health)(const struct agent *agent, char *buf, size_t len);
	const struct agent_route *routes;
	unsigned n_routes;
	/* Undo start; called only for parts whose start succeeded (or that have none). */
	void (*stop)(struct agent *agent);
};

/*
 * Starts agent's parts in table order, noting in started[i] which did. 0, or
 * the -errno of a fatal part that did not start, named in the log, after
 * stopping the ones before it again.
 */
int agent_parts_start(struct agent *agent, bool *started);
/* Stops the first n parts that started, in reverse order. */
void agent_parts_stop(struct agent *agent, const bool *started, unsigned n);
/* Wakes the loop when fd is readable; a negative fd is no fd. */
void agent_poll_read(struct agent_poll *poll, int fd);
/* The earlier of two deadlines. */
uint64_t agent_earlier(uint64_t a, uint64_t b);

#endif
