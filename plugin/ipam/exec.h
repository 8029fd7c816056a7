/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Running the delegated IPAM plugin binary once: fork/exec with the CNI
 * environment, pipes for stdin, stdout and stderr, and a deadline after which
 * it is killed with its process group; then what the run answered.
 */
#ifndef VELO_IPAM_EXEC_H
#define VELO_IPAM_EXEC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ipam/call.h"

/* Output collected up to max bytes; overflow tells that more was cut. */
struct bounded_buf {
	char *data;
	size_t len;
	size_t max;
	bool overflow;
};

/* One run: the caller fills the fields up to input, plugin_start and plugin_wait the rest. */
struct plugin_run {
	const char *path;
	const char *name;
	const char *command;
	const struct ipam_call *call;
	const char *input;
	/* out: */
	struct bounded_buf out;
	struct bounded_buf err;
	int status; /* from waitpid */
	/* between plugin_start and plugin_wait: */
	pid_t pid;
	int exec_status_fd; /* the child's exec errno, or EOF once it exec'd */
	int in_fd, out_fd, err_fd;
	size_t in_off; /* stdin bytes written so far */
	long long deadline_ms;
	struct sigaction old_pipe;
};

/*
 * Starts the plugin and hands it as much of its stdin as the pipe takes, so
 * the caller can do other work while it runs. Every successful start must be
 * followed by plugin_wait. Records nothing.
 */
int plugin_start(struct plugin_run *run);
/* Feeds the rest of stdin, collects the answer and reaps the plugin. */
int plugin_wait(struct plugin_run *run);
/* Runs the plugin once. Records nothing: the caller knows what a failure means. */
int plugin_run(struct plugin_run *run);
/* Frees the collected stdout and stderr. */
void run_free(struct plugin_run *run);
/* Records why a run did not finish (timeout, oversize answer, spawn failure). */
int fail_run(const struct plugin_run *run, int ret);

/* What a failed run said: its error JSON, else its exit and stderr. */
struct plugin_error {
	int code; /* the plugin's CNI code, 0 when it gave none */
	char msg[320];
	char details[512];
};

/* The plugin exited with status 0. */
bool run_succeeded(const struct plugin_run *run);
void plugin_error_read(const struct plugin_run *run, struct plugin_error *error);
/*
 * Records the failed run's error under cni_code: -EREMOTEIO when the plugin
 * answered with a CNI error, -EIO when it gave none.
 */
int fail_with_plugin_error(const struct plugin_run *run, int cni_code);

#define IPAM_TIMEOUT_MS_DEFAULT 30000U

/*
 * For tests only; the plugin itself never calls it. How long one IPAM plugin
 * run may take before it is killed; 0 restores the default.
 */
void ipam_set_timeout_ms(unsigned timeout_ms);

#endif
