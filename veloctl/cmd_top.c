// SPDX-License-Identifier: Apache-2.0
/*
 * veloctl top: BPF program cost over windows. Holds one BPF_ENABLE_STATS fd
 * for as long as it runs (not the sysctl, which other tools may own) and
 * shows the run_cnt/run_time_ns deltas of each window: the kernel counters
 * also grow whenever anyone else has stats on, so only deltas mean anything.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "datapath/progs.h"
#include "cmd_top.h"
#include "ctl.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int signo)
{
	(void)signo;
	stop_requested = 1;
}

/* Sleeps seconds; false when a signal asked to stop. */
static bool sleep_window(double seconds)
{
	struct timespec left = { .tv_sec = (time_t)seconds,
				 .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9) };

	while (nanosleep(&left, &left)) {
		if (errno != EINTR || stop_requested)
			return false;
	}
	return !stop_requested;
}

static int by_run_time(const void *a, const void *b)
{
	const struct velo_prog_delta *x = a, *y = b;

	if (x->run_time_ns != y->run_time_ns)
		return x->run_time_ns < y->run_time_ns ? 1 : -1;
	return x->prog->id < y->prog->id ? -1 : x->prog->id > y->prog->id;
}

static double ns_per_run(const struct velo_prog_delta *delta)
{
	return delta->runs ? (double)delta->run_time_ns / (double)delta->runs : 0;
}

static cJSON *window_json(const struct velo_prog_delta *deltas, unsigned n, double seconds,
			  long cpus)
{
	cJSON *json = cJSON_CreateObject(), *list;
	double total_ns = 0;

	if (!json)
		return NULL;
	cJSON_AddNumberToObject(json, "intervalSeconds", seconds);
	cJSON_AddNumberToObject(json, "cpus", (double)cpus);
	list = cJSON_AddArrayToObject(json, "programs");
	for (unsigned i = 0; list && i < n; i++) {
		cJSON *prog = cJSON_CreateObject();

		if (!prog)
			break;
		total_ns += (double)deltas[i].run_time_ns;
		cJSON_AddNumberToObject(prog, "id", deltas[i].prog->id);
		cJSON_AddStringToObject(prog, "name", deltas[i].prog->name);
		cJSON_AddStringToObject(prog, "type", deltas[i].prog->type);
		cJSON_AddNumberToObject(prog, "runs", (double)deltas[i].runs);
		cJSON_AddNumberToObject(prog, "runTimeNs", (double)deltas[i].run_time_ns);
		cJSON_AddNumberToObject(prog, "runsPerSecond", (double)deltas[i].runs / seconds);
		cJSON_AddNumberToObject(prog, "nsPerRun", ns_per_run(&deltas[i]));
		cJSON_AddNumberToObject(prog, "cpuPercent",
					100.0 * (double)deltas[i].run_time_ns / (seconds * 1e9));
		cJSON_AddItemToArray(list, prog);
	}
	cJSON_AddNumberToObject(json, "cpuPercent", 100.0 * total_ns / (seconds * 1e9));
	return json;
}

static void print_window(const struct velo_prog_delta *deltas, unsigned n, double seconds,
			 long cpus, bool clear)
{
	double total_ns = 0;

	if (clear)
		printf("\033[H\033[2J");
	for (unsigned i = 0; i < n; i++)
		total_ns += (double)deltas[i].run_time_ns;
	printf("veloctl top - %.1f s window, %ld CPUs, BPF total %.2f%% of one CPU "
	       "(stats on: ~75 ns/run extra for every BPF program)\n\n",
	       seconds, cpus, 100.0 * total_ns / (seconds * 1e9));
	printf("%-8s %-16s %-16s %12s %10s %8s\n", "ID", "NAME", "TYPE", "RUNS/S", "NS/RUN",
	       "CPU%");
	for (unsigned i = 0; i < n; i++)
		printf("%-8u %-16s %-16s %12.1f %10.1f %8.3f\n", deltas[i].prog->id,
		       deltas[i].prog->name, deltas[i].prog->type, (double)deltas[i].runs / seconds,
		       ns_per_run(&deltas[i]),
		       100.0 * (double)deltas[i].run_time_ns / (seconds * 1e9));
	if (!n)
		printf("(no %sBPF programs loaded)\n", "velo_* ");
	fflush(stdout);
}

int cmd_ctl_top(struct ctl *ctl)
{
	struct sigaction action = { .sa_handler = on_signal };
	struct velo_prog_set start = {}, end = {};
	struct velo_prog_delta *deltas = NULL;
	long iterations = ctl->iterations > 0 ? ctl->iterations : (ctl->json ? 1 : 0);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	bool clear = isatty(STDOUT_FILENO) && iterations != 1;
	int stats_fd, ret, exit_code = CTL_EXIT_OK;

	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
	stats_fd = velo_stats_enable();
	if (stats_fd < 0) {
		ctl_error(ctl, "BPF_ENABLE_STATS: %s (needs CAP_SYS_ADMIN and kernel >= 5.8)",
			  strerror(-stats_fd));
		return CTL_EXIT_FAILED;
	}
	ret = velo_progs_sample(ctl->all_progs, &start);
	for (long i = 0; !ret && (!iterations || i < iterations); i++) {
		double seconds;

		if (!sleep_window(ctl->interval_s))
			break;
		ret = velo_progs_sample(ctl->all_progs, &end);
		if (ret)
			break;
		free(deltas);
		deltas = calloc(end.n ? end.n : 1, sizeof(*deltas));
		if (!deltas) {
			ret = -ENOMEM;
			break;
		}
		velo_progs_delta(&start, &end, deltas);
		qsort(deltas, end.n, sizeof(*deltas), by_run_time);
		seconds = (double)(end.taken_ns - start.taken_ns) / 1e9;
		if (ctl->json) {
			cJSON *json = window_json(deltas, end.n, seconds, cpus);

			if (!json || ctl_print_json(ctl, json)) {
				ret = -ENOMEM;
				break;
			}
		} else {
			print_window(deltas, end.n, seconds, cpus, clear);
		}
		velo_progs_free(&start);
		start = end;
		memset(&end, 0, sizeof(end));
	}
	if (ret) {
		ctl_error(ctl, "sample BPF programs: %s", strerror(-ret));
		exit_code = CTL_EXIT_FAILED;
	}
	close(stats_fd);
	free(deltas);
	velo_progs_free(&start);
	velo_progs_free(&end);
	return exit_code;
}
