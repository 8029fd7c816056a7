// SPDX-License-Identifier: Apache-2.0
/*
 * The cost of velo's BPF programs during one command, for bench/datapath.sh:
 *   dp_stats [-o FILE] [-i ID,ID...] -- CMD [ARG...]
 * Holds a BPF_ENABLE_STATS fd (run-time stats on, node-wide, only while held), snapshots
 * run_cnt and run_time_ns of every program whose name starts with velo_ (or only the
 * given ids), runs CMD, snapshots again and writes one CSV line per program that ran:
 * "id,name,run_cnt,run_time_ns". CMD's own output and exit status pass through.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#define MAX_PROGS 1024
#define NAME_PREFIX "velo_"

struct prog_sample {
	__u32 id;
	char name[BPF_OBJ_NAME_LEN];
	__u64 run_cnt;
	__u64 run_time_ns;
};

static __u32 wanted[MAX_PROGS];
static int n_wanted;

static int is_wanted(__u32 id, const char *name)
{
	if (!n_wanted)
		return !strncmp(name, NAME_PREFIX, strlen(NAME_PREFIX));
	for (int i = 0; i < n_wanted; i++)
		if (wanted[i] == id)
			return 1;
	return 0;
}

static int snapshot(struct prog_sample *out)
{
	__u32 id = 0;
	int n = 0;

	while (n < MAX_PROGS && !bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue; /* gone meanwhile */
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && is_wanted(id, info.name)) {
			out[n].id = id;
			memcpy(out[n].name, info.name, sizeof(out[n].name));
			out[n].run_cnt = info.run_cnt;
			out[n].run_time_ns = info.run_time_ns;
			n++;
		}
		close(fd);
	}
	return n;
}

static struct prog_sample before[MAX_PROGS], after[MAX_PROGS];

int main(int argc, char **argv)
{
	const char *out_path = NULL;
	FILE *out = stdout;
	int opt, status, stats_fd, n_before, n_after;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+o:i:")) != -1) {
		switch (opt) {
		case 'o':
			out_path = optarg;
			break;
		case 'i':
			for (char *tok = strtok(optarg, ","); tok && n_wanted < MAX_PROGS;
			     tok = strtok(NULL, ","))
				wanted[n_wanted++] = (__u32)strtoul(tok, NULL, 10);
			break;
		default:
			goto usage;
		}
	}
	if (optind >= argc)
		goto usage;
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "dp_stats: BPF_ENABLE_STATS: %s\n", strerror(-stats_fd));
		return 1;
	}
	n_before = snapshot(before);
	pid = fork();
	if (pid < 0)
		return perror("dp_stats: fork"), 1;
	if (!pid) {
		close(stats_fd);
		execvp(argv[optind], argv + optind);
		perror("dp_stats: exec");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return perror("dp_stats: waitpid"), 1;
	n_after = snapshot(after);
	close(stats_fd);

	if (out_path && !(out = fopen(out_path, "w")))
		return perror("dp_stats: output"), 1;
	for (int i = 0; i < n_after; i++) {
		__u64 cnt = after[i].run_cnt, ns = after[i].run_time_ns;

		for (int j = 0; j < n_before; j++) {
			if (before[j].id == after[i].id) {
				cnt -= before[j].run_cnt;
				ns -= before[j].run_time_ns;
				break;
			}
		}
		if (cnt)
			fprintf(out, "%u,%s,%llu,%llu\n", after[i].id, after[i].name,
				(unsigned long long)cnt, (unsigned long long)ns);
	}
	if (out != stdout)
		fclose(out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
usage:
	fprintf(stderr, "usage: dp_stats [-o FILE] [-i ID,ID...] -- CMD [ARG...]\n");
	return 2;
}
