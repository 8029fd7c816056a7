/* SPDX-License-Identifier: Apache-2.0 */
/* veloctl's shared context (ctl.c): global options, output mode, error reporting. */
#ifndef VELOCTL_CTL_H
#define VELOCTL_CTL_H

#include <limits.h>
#include <stdbool.h>

#include <cJSON.h>

#include "cni/config.h"

/* Exit codes (docs/veloctl.md). */
enum {
	CTL_EXIT_OK = 0,
	CTL_EXIT_FAILED = 1, /* the command could not do what was asked */
	CTL_EXIT_USAGE = 2, /* unknown command or option, bad value */
	CTL_EXIT_UNHEALTHY = 3, /* status: velo is degraded (agent unreachable, bad records) */
};

struct ctl {
	bool json;
	bool pretty;
	struct velo_paths paths;
	char network[VELO_NAME_MAX]; /* "" = every network under state_dir */
	char agent[256]; /* velod host:port; "" = don't ask */
	/* velod's local socket, where /flows and /policy are: --socket, $VELOD_SOCKET, else
	 * <run_dir>/velod.sock; "" = ask agent (a velod with serveFlowsOnListen) */
	char socket[PATH_MAX];
	bool socket_set;
	char cni_conf_dir[PATH_MAX];
	char output[PATH_MAX]; /* bugtool archive */
	double interval_s; /* top */
	long iterations; /* top; 0 = until interrupted */
	bool all_progs; /* top: every program, not only velo_* */
	const char *argument; /* the command's operand (policy: NAMESPACE/NAME), or NULL */
	/* policy why: its three operands after "why" (SRC DST PORT/PROTO), else NULL. */
	const char *why[3];
	const char *argv0;
	char **argv; /* what veloctl was started with, for bugtool's own dumps */
	int argc;
};

struct ctl_command {
	const char *name;
	int (*run)(struct ctl *ctl);
	const char *summary;
	const char *usage; /* the command's --help text */
	bool operand; /* takes one optional operand (ctl->argument) */
};

/* Reports an error: {"error": "..."} on stdout in JSON mode, "Error: ..." on stderr otherwise. */
void ctl_error(const struct ctl *ctl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints json (and frees it) in the selected format. */
int ctl_print_json(const struct ctl *ctl, cJSON *json);

/* Where to ask velod for /flows and /policy: the local socket, else (--socket "") the agent. */
const char *ctl_private_agent(const struct ctl *ctl);

/* Each network to look at: --network, else every directory under state_dir. */
typedef int (*ctl_network_fn)(const char *network, void *ctx);
int ctl_foreach_network(const struct ctl *ctl, ctl_network_fn fn, void *ctx);

/* Names of the features in a record's bit set, as a JSON array. */
cJSON *ctl_feature_names(unsigned bits);

#endif
