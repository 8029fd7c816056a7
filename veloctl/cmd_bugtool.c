// SPDX-License-Identifier: Apache-2.0
/*
 * veloctl bugtool: one tar.gz with what a maintainer needs to understand a
 * node: CNI configs, velo's logs and state, bpftool dumps, ip/tc state and
 * veloctl's own status. Each command's output (stderr included) lands in
 * commands/<name>.txt; a failing command is recorded there, never fatal.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "state/state.h"
#include "cmd_bugtool.h"
#include "ctl.h"

#define COMMAND_TIMEOUT_S 30
#define MAX_ARGS 24

struct bugtool {
	const struct ctl *ctl;
	char root[64]; /* the temp dir */
	char name[128]; /* top directory inside the archive */
	char dir[PATH_MAX]; /* root/name */
	unsigned failures;
};

static bool have_program(const char *name, char *path, size_t len)
{
	static const char *const dirs[] = { "/usr/sbin", "/usr/bin",	    "/sbin",
					    "/bin",	 "/usr/local/sbin", "/usr/local/bin" };

	for (unsigned i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, len, "%s/%s", dirs[i], name);
		if (!access(path, X_OK))
			return true;
	}
	return false;
}

/* Runs argv (argv[0] a bare name looked up in the usual dirs, or a path); output to file. */
static int run_command(struct bugtool *tool, const char *file, char *const argv[])
{
	char out_path[PATH_MAX + 160], program[PATH_MAX];
	int status, fd;
	pid_t pid;

	if (argv[0][0] == '/')
		snprintf(program, sizeof(program), "%s", argv[0]);
	else if (!have_program(argv[0], program, sizeof(program)))
		return -ENOENT;
	snprintf(out_path, sizeof(out_path), "%s/commands/%s", tool->dir, file);
	fd = open(out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	dprintf(fd, "$");
	for (unsigned i = 0; argv[i]; i++)
		dprintf(fd, " %s", argv[i]);
	dprintf(fd, "\n");
	pid = fork();
	if (pid < 0) {
		close(fd);
		return -errno;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		alarm(COMMAND_TIMEOUT_S); /* survives exec: a hung command dies */
		execv(program, argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		dprintf(fd, "# exit status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
		tool->failures++;
	}
	close(fd);
	return 0;
}

#define RUN(tool, file, ...)                                         \
	do {                                                         \
		char *const args_[MAX_ARGS] = { __VA_ARGS__, NULL }; \
		run_command(tool, file, args_);                      \
	} while (0)

static void collect_bpftool(struct bugtool *tool)
{
	char path[PATH_MAX];

	if (!have_program("bpftool", path, sizeof(path))) {
		RUN(tool, "bpftool.txt", "/bin/echo", "bpftool not installed");
		return;
	}
	RUN(tool, "bpftool-prog.txt", "bpftool", "prog", "show");
	RUN(tool, "bpftool-prog.json", "bpftool", "-j", "prog", "show");
	RUN(tool, "bpftool-map.txt", "bpftool", "map", "show");
	RUN(tool, "bpftool-map.json", "bpftool", "-j", "map", "show");
	RUN(tool, "bpftool-link.txt", "bpftool", "link", "show");
	RUN(tool, "bpftool-net.txt", "bpftool", "net", "show");
	RUN(tool, "bpftool-cgroup.txt", "bpftool", "cgroup", "tree");
	RUN(tool, "bpffs.txt", "ls", "-laR", (char *)tool->ctl->paths.bpffs_dir);
}

static void collect_ip(struct bugtool *tool)
{
	RUN(tool, "ip-link.txt", "ip", "-d", "-s", "link", "show");
	RUN(tool, "ip-addr.txt", "ip", "-d", "addr", "show");
	RUN(tool, "ip-route.txt", "ip", "route", "show", "table", "all");
	RUN(tool, "ip-route.txt", "ip", "-6", "route", "show", "table", "all");
	RUN(tool, "ip-neigh.txt", "ip", "neigh", "show");
	RUN(tool, "ip-neigh.txt", "ip", "-6", "neigh", "show");
	RUN(tool, "ip-rule.txt", "ip", "rule", "show");
	RUN(tool, "ip-rule.txt", "ip", "-6", "rule", "show");
	RUN(tool, "tc-qdisc.txt", "tc", "qdisc", "show");
	RUN(tool, "sysctl.txt", "sysctl", "net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding",
	    "net.ipv6.conf.all.forwarding", "kernel.bpf_stats_enabled", "net.core.bpf_jit_enable");
	RUN(tool, "uname.txt", "uname", "-a");
}

/* tc filters of every velo veth named in a record. */
static int collect_tc_one(const struct velo_record *record, void *ctx)
{
	struct bugtool *tool = ctx;
	char *dev = (char *)record->host_ifname;

	if (!dev[0])
		return 0;
	RUN(tool, "tc-filter.txt", "tc", "-s", "-d", "filter", "show", "dev", dev, "ingress");
	RUN(tool, "tc-filter.txt", "tc", "-s", "-d", "filter", "show", "dev", dev, "egress");
	return 0;
}

static int collect_tc_network(const char *network, void *ctx)
{
	struct bugtool *tool = ctx;

	state_record_foreach(&tool->ctl->paths, network, collect_tc_one, tool);
	return 0;
}

/* veloctl's own view, from a child veloctl with the same paths. */
static void collect_veloctl(struct bugtool *tool)
{
	const struct ctl *ctl = tool->ctl;
	static const char *const commands[] = { "status", "endpoints", "sockets" };
	char file[64];

	for (unsigned i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char *argv[MAX_ARGS];
		unsigned n = 0;

		argv[n++] = "/proc/self/exe";
		argv[n++] = "-p";
		argv[n++] = "--state-dir";
		argv[n++] = (char *)ctl->paths.state_dir;
		argv[n++] = "--run-dir";
		argv[n++] = (char *)ctl->paths.run_dir;
		argv[n++] = "--bpffs";
		argv[n++] = (char *)ctl->paths.bpffs_dir;
		argv[n++] = "--agent";
		argv[n++] = (char *)ctl->agent;
		if (ctl->network[0]) {
			argv[n++] = "--network";
			argv[n++] = (char *)ctl->network;
		}
		argv[n++] = (char *)commands[i];
		argv[n] = NULL;
		snprintf(file, sizeof(file), "veloctl-%s.json", commands[i]);
		run_command(tool, file, argv);
	}
}

/* Copies path (file or directory) under files/, keeping its absolute path. */
static void collect_path(struct bugtool *tool, const char *path)
{
	char dest[PATH_MAX + 160];

	if (access(path, F_OK))
		return;
	snprintf(dest, sizeof(dest), "%s/files", tool->dir);
	RUN(tool, "copy.txt", "cp", "-a", "--parents", (char *)path, dest);
}

static void collect_files(struct bugtool *tool)
{
	const struct velo_paths *paths = &tool->ctl->paths;
	char rotated[PATH_MAX + 32];

	collect_path(tool, tool->ctl->cni_conf_dir);
	collect_path(tool, paths->log_file);
	snprintf(rotated, sizeof(rotated), "%s.1", paths->log_file);
	collect_path(tool, rotated);
	collect_path(tool, paths->state_dir);
	snprintf(rotated, sizeof(rotated), "%s/pending", paths->run_dir); /* ADDs in progress */
	collect_path(tool, rotated);
	snprintf(rotated, sizeof(rotated), "%s/bpf-probes", paths->run_dir);
	collect_path(tool, rotated);
	snprintf(rotated, sizeof(rotated), "%s/sockmap-probe", paths->run_dir);
	collect_path(tool, rotated);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) ? -errno : 0;
}

static int make_dirs(struct bugtool *tool)
{
	char path[PATH_MAX + 160];
	char host[64] = "node";
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	snprintf(tool->root, sizeof(tool->root), "/tmp/velo-bugtool-XXXXXX");
	if (!mkdtemp(tool->root))
		return -errno;
	gethostname(host, sizeof(host) - 1);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(tool->name, sizeof(tool->name), "velo-bugtool-%s-%s", host, stamp);
	snprintf(tool->dir, sizeof(tool->dir), "%s/%s", tool->root, tool->name);
	if (mkdir(tool->dir, 0700))
		return -errno;
	snprintf(path, sizeof(path), "%s/commands", tool->dir);
	if (mkdir(path, 0700))
		return -errno;
	snprintf(path, sizeof(path), "%s/files", tool->dir);
	return mkdir(path, 0700) ? -errno : 0;
}

int cmd_ctl_bugtool(struct ctl *ctl)
{
	struct bugtool tool = { .ctl = ctl };
	char archive[PATH_MAX], cwd[PATH_MAX];
	int ret, exit_code = CTL_EXIT_OK;

	ret = make_dirs(&tool);
	if (ret) {
		ctl_error(ctl, "create a temp dir under /tmp: %s", strerror(-ret));
		exit_code = CTL_EXIT_FAILED;
		goto out;
	}
	if (ctl->output[0])
		snprintf(archive, sizeof(archive), "%s", ctl->output);
	else if (getcwd(cwd, sizeof(cwd)))
		snprintf(archive, sizeof(archive), "%.3800s/%.200s.tar.gz", cwd, tool.name);
	else
		snprintf(archive, sizeof(archive), "%.200s.tar.gz", tool.name);

	collect_files(&tool);
	collect_veloctl(&tool);
	collect_bpftool(&tool);
	collect_ip(&tool);
	ctl_foreach_network(ctl, collect_tc_network, &tool);

	RUN(&tool, "tar.txt", "tar", "-czf", archive, "-C", tool.root, tool.name);
	if (access(archive, F_OK)) {
		ctl_error(ctl, "write %s failed (see tar's output in %s/commands/tar.txt)", archive,
			  tool.dir);
		exit_code = CTL_EXIT_FAILED;
		return exit_code; /* keep the temp dir: it is all the user has */
	}
	if (ctl->json) {
		cJSON *json = cJSON_CreateObject();

		cJSON_AddStringToObject(json, "archive", archive);
		cJSON_AddNumberToObject(json, "failedCommands", tool.failures);
		ctl_print_json(ctl, json);
	} else {
		printf("%s\n", archive);
		if (tool.failures)
			fprintf(stderr,
				"note: %u commands failed; their output is in the archive\n",
				tool.failures);
	}
out:
	if (tool.root[0] && tool.root[strlen(tool.root) - 1] != 'X')
		nftw(tool.root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return exit_code;
}
