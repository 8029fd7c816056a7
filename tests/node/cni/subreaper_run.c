// SPDX-License-Identifier: Apache-2.0
/*
 * subreaper_run CMD [ARG...]: runs CMD as a child subreaper runtime would
 * (containerd and CRI-O set PR_SET_CHILD_SUBREAPER): the orphans of CMD's
 * children become ours, and, like a Go runtime's exec.Cmd, we wait for CMD's
 * pid only. Then it reports every process we adopted: one that is still
 * running or a zombie after CMD exited is a child CMD left behind. Exit:
 * CMD's status, or 3 (adopted processes listed on stderr), 2 on usage/setup.
 * tests/node/cni/reap.bats drives velo's DEL through it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Our children (adopted ones included), from /proc/self/task/<tid>/children: counted, listed. */
static int adopted(void)
{
	char path[64], state[64], line[4096];
	int n = 0;
	FILE *file;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	file = fopen(path, "r");
	if (!file)
		return -1;
	if (fgets(line, sizeof(line), file)) {
		for (char *tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n")) {
			FILE *stat;
			char spath[64];

			n++;
			snprintf(spath, sizeof(spath), "/proc/%s/stat", tok);
			stat = fopen(spath, "r");
			if (stat && fgets(state, sizeof(state), stat))
				fprintf(stderr, "subreaper_run: adopted %s", state);
			else
				fprintf(stderr, "subreaper_run: adopted pid %s\n", tok);
			if (stat)
				fclose(stat);
			fputc('\n', stderr);
		}
	}
	fclose(file);
	return n;
}

int main(int argc, char **argv)
{
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: subreaper_run CMD [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		perror("subreaper_run: PR_SET_CHILD_SUBREAPER");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		execv(argv[1], argv + 1);
		perror("subreaper_run: exec");
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 2;
	/* Orphans are re-parented before their parent turns zombie: anything ours now was left. */
	if (adopted() > 0)
		return 3;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}
