// SPDX-License-Identifier: Apache-2.0
/*
 * velod, velo's node agent: `velod --config FILE`. Runs in the foreground,
 * logs on stderr, serves /metrics and /healthz, reconciles endpoints whose
 * pod vanished without a DEL and samples BPF program cost in windows. One
 * thread: the HTTP server is driven from this loop. SIGTERM/SIGINT end it
 * cleanly (stats fd closed, listener closed, no release left half done).
 * Pods never depend on it: the CNI plugin works with velod down.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include "base/log.h"
#include "net/retire.h"
#include "agent/config.h"
#include "agent/config_doc.h"
#include "agent/part.h"
#include "node/reconcile.h"
#include "parts.h"
#include "routing/routing.h"

#ifndef VELO_VERSION
#define VELO_VERSION "dev"
#endif

#define NS_PER_MS 1000000ull
#define MAX_SLEEP_MS 1000

static int signal_pipe[2] = { -1, -1 };
static volatile sig_atomic_t stop_signal;

static void on_signal(int signo)
{
	int saved_errno = errno;

	stop_signal = signo;
	if (write(signal_pipe[1], "x", 1) < 0) {
		/* The pipe is full: the loop wakes up anyway. */
	}
	errno = saved_errno;
}

static int setup_signals(void)
{
	struct sigaction action = { .sa_handler = on_signal };

	if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	sigemptyset(&action.sa_mask);
	if (sigaction(SIGTERM, &action, NULL) || sigaction(SIGINT, &action, NULL))
		return -errno;
	/* A scraper that hangs up mid-response must not kill the agent. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: velod --config FILE [--once]\n"
		"velo's node agent: Prometheus /metrics and /healthz, reconciliation of\n"
		"endpoints whose pod netns vanished without a DEL, BPF cost sampling.\n"
		"  -c, --config FILE  JSON config (docs/velod.md)\n"
		"      --once         one reconciliation pass, then exit (no HTTP, no sampling)\n"
		"      --config-reference  print docs/velod.md's config reference (markdown)\n"
		"  -V, --version      print the version\n"
		"  -h, --help         this text\n");
}

/* One turn's wait: until the earliest part's deadline, a part's fd or a signal. */
static int wait_turn(struct agent *agent, struct agent_poll *poll)
{
	uint64_t now = velo_monotonic_ns(), deadline = UINT64_MAX;
	struct timeval timeout;
	long long wait_ms;

	FD_ZERO(&poll->read);
	FD_ZERO(&poll->write);
	FD_ZERO(&poll->except);
	poll->max_fd = -1;
	poll->timeout_ms = -1;
	agent_poll_read(poll, signal_pipe[0]);
	for (unsigned i = 0; i < agent->n_parts; i++) {
		const struct agent_part *part = agent->parts[i];

		if (part->deadline)
			deadline = agent_earlier(deadline, part->deadline(agent));
		if (part->poll)
			part->poll(agent, poll);
	}
	wait_ms = deadline == UINT64_MAX ? MAX_SLEEP_MS
		  : deadline <= now	 ? 0
					 : (long long)((deadline - now) / NS_PER_MS) + 1;
	if (wait_ms > MAX_SLEEP_MS)
		wait_ms = MAX_SLEEP_MS;
	if (poll->timeout_ms >= 0 && poll->timeout_ms < wait_ms)
		wait_ms = poll->timeout_ms;
	timeout.tv_sec = wait_ms / 1000;
	timeout.tv_usec = (wait_ms % 1000) * 1000;
	return select(poll->max_fd + 1, &poll->read, &poll->write, &poll->except, &timeout);
}

static void run_loop(struct agent *agent)
{
	struct agent_poll poll;

	while (!stop_signal) {
		uint64_t now = velo_monotonic_ns();
		char drain[16];

		for (unsigned i = 0; i < agent->n_parts; i++)
			if (agent->parts[i]->step)
				agent->parts[i]->step(agent, now);
		if (wait_turn(agent, &poll) < 0) {
			if (errno == EINTR)
				continue;
			pr_err("select: %s", strerror(errno));
			break;
		}
		if (FD_ISSET(signal_pipe[0], &poll.read))
			while (read(signal_pipe[0], drain, sizeof(drain)) > 0)
				;
		/* In reverse: a part's new events reach the parts before it within the turn. */
		for (unsigned i = agent->n_parts; i-- > 0;)
			if (agent->parts[i]->ready)
				agent->parts[i]->ready(agent, &poll);
	}
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "once", no_argument, NULL, 'o' },
		{ "config-reference", no_argument, NULL, 'R' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct agent agent = {};
	bool *started;
	const char *config_path = NULL;
	bool once = false;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "c:Vh", options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config_path = optarg;
			break;
		case 'o':
			once = true;
			break;
		case 'R':
			config_doc_print(stdout);
			return 0;
		case 'V':
			printf("velod %s\n", VELO_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!config_path || optind < argc) {
		usage(stderr);
		return 2;
	}
	/* No log file: every line goes to stderr, for the DaemonSet's log collector. */
	log_open(NULL, VELO_LOG_INFO, 0);
	if (agent_config_load(config_path, &agent.config))
		return 1;
	log_open(NULL, agent.config.log_level, 0);
	/* routingMode names a backend velod has, asked only what it can give: a config fault. */
	if (routing_select(&agent.hostgw, &agent.config, config_path))
		return 1;
	agent.started_unix = agent_now_unix();

	if (once) {
		reconcile_run(&agent);
		velo_retired_reap();
		pr_info("reconcile: %llu released, %llu busy, %llu errors",
			(unsigned long long)agent.reconcile.released,
			(unsigned long long)agent.reconcile.busy,
			(unsigned long long)agent.reconcile.errors);
		return agent.reconcile.errors ? 1 : 0;
	}
	ret = setup_signals();
	if (ret) {
		pr_err("signals: %s", strerror(-ret));
		return 1;
	}
	agent.parts = agent_parts;
	agent.n_parts = agent_parts_len;
	started = calloc(agent.n_parts, sizeof(*started));
	if (!started || agent_parts_start(&agent, started)) {
		free(started);
		return 1;
	}
	pr_info("velod %s started: state %s, listen %s, reconcile every %us (grace %us), "
		"BPF stats %.1fs every %us",
		VELO_VERSION, agent.config.paths.state_dir,
		agent.config.listen[0] ? agent.config.listen : "off",
		agent.config.reconcile_interval_s, agent.config.grace_period_s,
		agent.config.sample_window_s, agent.config.sample_interval_s);

	run_loop(&agent);

	pr_info("velod stopping (signal %d)", (int)stop_signal);
	agent_parts_stop(&agent, started, agent.n_parts);
	free(started);
	log_close();
	return 0;
}
