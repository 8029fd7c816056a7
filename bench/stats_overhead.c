// SPDX-License-Identifier: Apache-2.0
/*
 * What BPF run-time stats cost every BPF program on the node while anyone
 * holds a BPF_ENABLE_STATS fd (as velod's sampling windows and veloctl top
 * do): a two-instruction socket filter run REPEAT times with
 * BPF_PROG_TEST_RUN, stats off and on alternately, ROUNDS times each.
 *   stats_overhead [REPEAT [ROUNDS]]
 * Prints one CSV line per run ("stats,ns_per_run") and then the medians and
 * their difference. The kernel times each run with sched_clock() only while
 * the stats static key is on, which is what the difference measures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

static int load_trivial(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "velo_stats_cost", "GPL", insns, 2, NULL);
}

/* Mean ns per run over repeat runs, as the kernel measured it; negative errno on failure. */
static double run_once(int prog_fd, unsigned repeat)
{
	unsigned char packet[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = packet, .data_size_in = sizeof(packet),
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	return opts.duration; /* the kernel's mean per run, ns */
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *values, unsigned n)
{
	qsort(values, n, sizeof(*values), cmp_double);
	return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	unsigned repeat = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 5000000;
	unsigned rounds = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 7;
	double *off, *on;
	int prog_fd;

	if (!repeat || !rounds || rounds > 1000) {
		fprintf(stderr, "usage: stats_overhead [REPEAT [ROUNDS (1-1000)]]\n");
		return 2;
	}
	prog_fd = load_trivial();
	if (prog_fd < 0) {
		fprintf(stderr, "stats_overhead: load: %s\n", strerror(errno));
		return 1;
	}
	off = calloc(rounds, sizeof(*off));
	on = calloc(rounds, sizeof(*on));
	if (!off || !on)
		return 1;
	printf("stats,ns_per_run\n");
	for (unsigned i = 0; i < rounds; i++) {
		int stats_fd;

		off[i] = run_once(prog_fd, repeat);
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (stats_fd < 0) {
			fprintf(stderr, "stats_overhead: BPF_ENABLE_STATS: %s\n", strerror(errno));
			return 1;
		}
		on[i] = run_once(prog_fd, repeat);
		close(stats_fd);
		if (off[i] < 0 || on[i] < 0) {
			fprintf(stderr, "stats_overhead: BPF_PROG_TEST_RUN failed\n");
			return 1;
		}
		printf("off,%.1f\non,%.1f\n", off[i], on[i]);
	}
	printf("# %u rounds of %u runs: median %.1f ns/run stats off, %.1f on: +%.1f ns per run\n",
	       rounds, repeat, median(off, rounds), median(on, rounds),
	       median(on, rounds) - median(off, rounds));
	return 0;
}
