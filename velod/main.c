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
#include "config.h"
#include "flows.h"
#include "flows_http.h"
#include "http.h"
#include "policy.h"
#include "reaper.h"
#include "reconcile.h"
#include "routing.h"
#include "sampler.h"
#include "services.h"

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
		"  -V, --version      print the version\n"
		"  -h, --help         this text\n");
}

static uint64_t earlier(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static void run_loop(struct agent *agent, struct http_server *server)
{
	const struct agent_config *config = &agent->config;
	uint64_t next_reconcile = velo_monotonic_ns();

	while (!stop_signal) {
		uint64_t now = velo_monotonic_ns(), deadline = UINT64_MAX;
		long long wait_ms, http_ms;
		struct timeval timeout;
		fd_set rs, ws, es;
		int max_fd, n;
		char drain[16];

		if (config->reconcile_interval_s && now >= next_reconcile) {
			reconcile_run(agent);
			routing_repair(config);
			now = velo_monotonic_ns();
			next_reconcile = now + config->reconcile_interval_s * 1000 * NS_PER_MS;
		}
		sampler_step(&agent->sampler, config, now);
		reaper_step(&agent->reaper, config, now);
		routing_step(&agent->hostgw, config, now);
		services_step(&agent->services, config, now);
		policy_step(&agent->policy, config, now);
		flows_step(agent->flows, now);

		if (config->reconcile_interval_s)
			deadline = next_reconcile;
		deadline = earlier(deadline, sampler_deadline(&agent->sampler, config));
		deadline = earlier(deadline, reaper_deadline(&agent->reaper));
		deadline = earlier(deadline, routing_deadline(&agent->hostgw, config));
		deadline = earlier(deadline, services_deadline(&agent->services, config));
		deadline = earlier(deadline, policy_deadline(&agent->policy));
		deadline = earlier(deadline, flows_deadline(agent->flows));
		wait_ms = deadline == UINT64_MAX ? MAX_SLEEP_MS
			  : deadline <= now	 ? 0
						 : (long long)((deadline - now) / NS_PER_MS) + 1;
		if (wait_ms > MAX_SLEEP_MS)
			wait_ms = MAX_SLEEP_MS;

		FD_ZERO(&rs);
		FD_ZERO(&ws);
		FD_ZERO(&es);
		FD_SET(signal_pipe[0], &rs);
		max_fd = signal_pipe[0];
		if (routing_fd(&agent->hostgw) >= 0) {
			/* The Node watch changed the list: routes follow within the loop's turn. */
			FD_SET(routing_fd(&agent->hostgw), &rs);
			if (routing_fd(&agent->hostgw) > max_fd)
				max_fd = routing_fd(&agent->hostgw);
		}
		for (unsigned i = 0; services_fd(&agent->services, i) >= 0; i++) {
			/* A Service watch changed the state or has log lines. */
			FD_SET(services_fd(&agent->services, i), &rs);
			if (services_fd(&agent->services, i) > max_fd)
				max_fd = services_fd(&agent->services, i);
		}
		for (unsigned i = 0; policy_fd(&agent->policy, i) >= 0; i++) {
			/* A policy watch changed the objects or has log lines. */
			FD_SET(policy_fd(&agent->policy, i), &rs);
			if (policy_fd(&agent->policy, i) > max_fd)
				max_fd = policy_fd(&agent->policy, i);
		}
		if (flows_fd(agent->flows) >= 0) {
			/* Flow events in the ring. */
			FD_SET(flows_fd(agent->flows), &rs);
			if (flows_fd(agent->flows) > max_fd)
				max_fd = flows_fd(agent->flows);
		}
		max_fd = http_fdset(server, &rs, &ws, &es, max_fd, &http_ms);
		if (http_ms >= 0 && http_ms < wait_ms)
			wait_ms = http_ms;
		timeout.tv_sec = wait_ms / 1000;
		timeout.tv_usec = (wait_ms % 1000) * 1000;
		n = select(max_fd + 1, &rs, &ws, &es, &timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pr_err("select: %s", strerror(errno));
			break;
		}
		if (FD_ISSET(signal_pipe[0], &rs))
			while (read(signal_pipe[0], drain, sizeof(drain)) > 0)
				;
		if (flows_consume(agent->flows))
			flows_http_wake();
		http_run(server, &rs, &ws, &es);
	}
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "once", no_argument, NULL, 'o' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct agent agent = {};
	struct http_server *server = NULL;
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
	ret = reaper_start(&agent.reaper, &agent.config);
	if (ret) {
		pr_err("agent lock in runDir %s: %s", agent.config.paths.run_dir,
		       ret == -EWOULDBLOCK ? "another velod holds it" : strerror(-ret));
		return 1;
	}
	server = http_start(&agent); /* listen and the local socket; it logs what it serves */
	if (!server)
		return 1;
	if (routing_start(&agent.hostgw, &agent.config)) {
		reaper_stop(&agent.reaper);
		http_stop(server);
		return 1;
	}
	if (services_start(&agent.services, &agent.config)) {
		pr_err("Service watches: %s", strerror(errno));
		routing_stop(&agent.hostgw, &agent.config);
		reaper_stop(&agent.reaper);
		http_stop(server);
		return 1;
	}
	ret = policy_start(&agent.policy, &agent.config);
	if (ret) {
		pr_err("policy source: %s", strerror(-ret));
		services_stop(&agent.services);
		routing_stop(&agent.hostgw, &agent.config);
		reaper_stop(&agent.reaper);
		http_stop(server);
		return 1;
	}
	agent.flows = flows_new(&agent.config, &agent.policy, &agent.services);
	if (!agent.flows && errno)
		pr_err("flows: %s (no flow events)", strerror(errno));
	sampler_init(&agent.sampler, &agent.config);
	pr_info("velod %s started: state %s, listen %s, reconcile every %us (grace %us), "
		"BPF stats %.1fs every %us",
		VELO_VERSION, agent.config.paths.state_dir,
		agent.config.listen[0] ? agent.config.listen : "off",
		agent.config.reconcile_interval_s, agent.config.grace_period_s,
		agent.config.sample_window_s, agent.config.sample_interval_s);

	run_loop(&agent, server);

	pr_info("velod stopping (signal %d)", (int)stop_signal);
	sampler_fini(&agent.sampler);
	routing_stop(&agent.hostgw, &agent.config);
	services_stop(&agent.services);
	policy_stop(&agent.policy);
	reaper_stop(&agent.reaper);
	http_stop(server);
	flows_free(agent.flows);
	log_close();
	return 0;
}
