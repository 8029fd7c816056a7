// SPDX-License-Identifier: Apache-2.0
/*
 * cni_latency: runs a plan of CNI invocations and prints one CSV row per invocation.
 *
 * A shell loop would add a fork of the shell, env and a date call to every sample, which
 * is the same order as the milliseconds being measured; this driver starts each plugin
 * with posix_spawn (vfork + exec) straight from one small process, so the only overhead
 * left is the spawn itself (measure it with a plan row for /bin/true).
 *
 * Usage: cni_latency -P CNI_PATH -p LABEL=BINARY:CONFIG [-p ...] [-n LABEL=NETNS ...]
 *                    [-o OUTFILE] < PLAN
 *   -n: the network namespace (the "node") LABEL's plugin runs in; default the driver's.
 *   Each plugin on its own node sees only its own pods' devices and routes, as on a node.
 * PLAN lines: TAG LABEL VERB CONTAINERID NETNS IFNAME MODE
 *   MODE "time": posix_spawn, wall time, wait4 ru_maxrss (includes the plugin's waited
 *   children, e.g. its IPAM plugin). MODE "rss": the plugin runs under ptrace and, at its
 *   exit, its own VmHWM is read (its own address space only: neither the IPAM child nor
 *   this driver counts); wall time is still printed but carries the ptrace overhead.
 * Output (stdout): tag,label,verb,containerid,usec,maxrss_kb,hwm_kb,status
 * Plugin stdout and stderr go to OUTFILE (default /dev/null).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PLUGINS 16
#define FIELD_MAX 512

struct plugin {
	char label[64];
	char binary[FIELD_MAX];
	char config[FIELD_MAX];
	int node_fd; /* -1: the driver's own netns */
};

struct invocation {
	char tag[64];
	char label[64];
	char verb[16];
	char container_id[128];
	char netns[FIELD_MAX];
	char ifname[32];
	char mode[16];
};

struct sample {
	long long usec;
	long maxrss_kb;
	long hwm_kb;
	int status; /* exit code, or 128 + signal */
};

static struct plugin plugins[MAX_PLUGINS];
static int plugin_count;
static const char *cni_path = "/usr/lib/cni";
static int output_fd = -1;
static int home_fd = -1; /* the driver's netns, for plugins without -n */
static int current_fd = -1; /* the netns the driver is in now */

static long long now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int parse_plugin(const char *arg)
{
	const char *eq = strchr(arg, '=');
	const char *colon = eq ? strchr(eq, ':') : NULL;
	struct plugin *plugin;

	if (!eq || !colon || plugin_count == MAX_PLUGINS)
		return -EINVAL;
	plugin = &plugins[plugin_count];
	if ((size_t)(eq - arg) >= sizeof(plugin->label) ||
	    (size_t)(colon - eq - 1) >= sizeof(plugin->binary) ||
	    strlen(colon + 1) >= sizeof(plugin->config))
		return -ENAMETOOLONG;
	memcpy(plugin->label, arg, eq - arg);
	memcpy(plugin->binary, eq + 1, colon - eq - 1);
	strcpy(plugin->config, colon + 1);
	plugin->node_fd = -1;
	plugin_count++;
	return 0;
}

static struct plugin *find_plugin(const char *label)
{
	for (int i = 0; i < plugin_count; i++)
		if (!strcmp(plugins[i].label, label))
			return &plugins[i];
	return NULL;
}

/* -n LABEL=NETNS: the label's plugin runs in that network namespace. */
static int parse_node(const char *arg)
{
	const char *eq = strchr(arg, '=');
	char label[64];
	struct plugin *plugin;

	if (!eq || (size_t)(eq - arg) >= sizeof(label))
		return -EINVAL;
	memcpy(label, arg, eq - arg);
	label[eq - arg] = '\0';
	plugin = find_plugin(label);
	if (!plugin)
		return -ENOENT;
	plugin->node_fd = open(eq + 1, O_RDONLY | O_CLOEXEC);
	return plugin->node_fd < 0 ? -errno : 0;
}

/* The spawned plugin inherits the driver's netns: switch only when it changes. */
static int enter_node(const struct plugin *plugin)
{
	int fd = plugin->node_fd >= 0 ? plugin->node_fd : home_fd;

	if (fd == current_fd)
		return 0;
	if (setns(fd, CLONE_NEWNET))
		return -errno;
	current_fd = fd;
	return 0;
}

/* envp for one invocation; the strings live in storage. */
static void build_env(const struct invocation *inv, char storage[6][FIELD_MAX + 32], char *envp[7])
{
	snprintf(storage[0], sizeof(storage[0]), "CNI_COMMAND=%s", inv->verb);
	snprintf(storage[1], sizeof(storage[1]), "CNI_CONTAINERID=%s", inv->container_id);
	snprintf(storage[2], sizeof(storage[2]), "CNI_NETNS=%s", inv->netns);
	snprintf(storage[3], sizeof(storage[3]), "CNI_IFNAME=%s", inv->ifname);
	snprintf(storage[4], sizeof(storage[4]), "CNI_PATH=%s", cni_path);
	snprintf(storage[5], sizeof(storage[5]), "PATH=/usr/sbin:/usr/bin:/sbin:/bin");
	for (int i = 0; i < 6; i++)
		envp[i] = storage[i];
	envp[6] = NULL;
}

static int exit_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 255;
}

static int run_timed(const struct plugin *plugin, char *const envp[], struct sample *sample)
{
	posix_spawn_file_actions_t actions;
	char *argv[] = { (char *)plugin->binary, NULL };
	struct rusage usage;
	long long start;
	int wstatus, ret;
	pid_t pid;

	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, 0, plugin->config, O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&actions, output_fd, 1);
	posix_spawn_file_actions_adddup2(&actions, output_fd, 2);
	start = now_usec();
	ret = posix_spawn(&pid, plugin->binary, &actions, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&actions);
	if (ret)
		return -ret;
	if (wait4(pid, &wstatus, 0, &usage) < 0)
		return -errno;
	sample->usec = now_usec() - start;
	sample->maxrss_kb = usage.ru_maxrss;
	sample->hwm_kb = 0;
	sample->status = exit_status(wstatus);
	return 0;
}

static long read_vm_hwm_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = 0;
	FILE *status;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	status = fopen(path, "r");
	if (!status)
		return 0;
	while (fgets(line, sizeof(line), status))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(status);
	return kb;
}

/* Child side of run_traced: stdin, stdout, stderr, then exec under ptrace. */
static void exec_traced_child(const struct plugin *plugin, char *const envp[])
{
	char *argv[] = { (char *)plugin->binary, NULL };
	int config_fd = open(plugin->config, O_RDONLY);

	if (config_fd < 0 || dup2(config_fd, 0) < 0 || dup2(output_fd, 1) < 0 ||
	    dup2(output_fd, 2) < 0 || ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
		_exit(127);
	execve(plugin->binary, argv, envp);
	_exit(127);
}

/*
 * The plugin's own peak RSS: stop it at its exit (PTRACE_O_TRACEEXIT), while its address
 * space still exists, and read VmHWM. Only the main thread is traced; other threads and
 * children run untraced. Signals the plugin receives are passed on unchanged.
 */
static int run_traced(const struct plugin *plugin, char *const envp[], struct sample *sample)
{
	struct rusage usage;
	bool exec_seen = false;
	long long start;
	int wstatus;
	pid_t pid;

	start = now_usec();
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		exec_traced_child(plugin, envp);
	sample->hwm_kb = 0;
	for (;;) {
		int deliver = 0;

		if (wait4(pid, &wstatus, __WALL, &usage) < 0)
			return -errno;
		if (!WIFSTOPPED(wstatus))
			break;
		if (wstatus >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			sample->hwm_kb = read_vm_hwm_kb(pid);
		} else if (WSTOPSIG(wstatus) == SIGTRAP && !exec_seen) {
			/* The stop after execve: from here on, stop at exit too. */
			exec_seen = true;
			ptrace(PTRACE_SETOPTIONS, pid, NULL,
			       (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL));
		} else {
			deliver = WSTOPSIG(wstatus);
		}
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)deliver);
	}
	sample->usec = now_usec() - start;
	sample->maxrss_kb = usage.ru_maxrss;
	sample->status = exit_status(wstatus);
	return 0;
}

static int run_invocation(const struct invocation *inv)
{
	char storage[6][FIELD_MAX + 32];
	const struct plugin *plugin;
	struct sample sample = { 0 };
	char *envp[7];
	int ret;

	plugin = find_plugin(inv->label);
	if (!plugin) {
		fprintf(stderr, "cni_latency: no plugin labelled %s\n", inv->label);
		return -ENOENT;
	}
	build_env(inv, storage, envp);
	ret = enter_node(plugin);
	if (ret) {
		fprintf(stderr, "cni_latency: entering %s's node: %s\n", plugin->label,
			strerror(-ret));
		return ret;
	}
	if (!strcmp(inv->mode, "rss"))
		ret = run_traced(plugin, envp, &sample);
	else
		ret = run_timed(plugin, envp, &sample);
	if (ret) {
		fprintf(stderr, "cni_latency: running %s: %s\n", plugin->binary, strerror(-ret));
		return ret;
	}
	printf("%s,%s,%s,%s,%lld,%ld,%ld,%d\n", inv->tag, inv->label, inv->verb, inv->container_id,
	       sample.usec, sample.maxrss_kb, sample.hwm_kb, sample.status);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: cni_latency -P CNI_PATH -p LABEL=BINARY:CONFIG [-p ...] "
			"[-n LABEL=NETNS ...] [-o OUTFILE] < PLAN\n"
			"PLAN lines: TAG LABEL VERB CONTAINERID NETNS IFNAME time|rss\n");
}

int main(int argc, char **argv)
{
	const char *output = "/dev/null";
	char line[2048];
	int opt, lineno = 0;

	home_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home_fd < 0) {
		fprintf(stderr, "cni_latency: /proc/self/ns/net: %s\n", strerror(errno));
		return 1;
	}
	current_fd = home_fd;
	while ((opt = getopt(argc, argv, "P:p:n:o:h")) != -1) {
		switch (opt) {
		case 'P':
			cni_path = optarg;
			break;
		case 'p':
			if (parse_plugin(optarg)) {
				fprintf(stderr, "cni_latency: bad -p %s\n", optarg);
				return 2;
			}
			break;
		case 'n':
			if (parse_node(optarg)) {
				fprintf(stderr, "cni_latency: bad -n %s (its -p first)\n", optarg);
				return 2;
			}
			break;
		case 'o':
			output = optarg;
			break;
		default:
			usage();
			return 2;
		}
	}
	output_fd = open(output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (output_fd < 0) {
		fprintf(stderr, "cni_latency: %s: %s\n", output, strerror(errno));
		return 1;
	}
	/* Rows must reach the file in order even if the caller stops us midway. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("tag,label,verb,containerid,usec,maxrss_kb,hwm_kb,status\n");
	while (fgets(line, sizeof(line), stdin)) {
		struct invocation inv;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%63s %63s %15s %127s %511s %31s %15s", inv.tag, inv.label,
			   inv.verb, inv.container_id, inv.netns, inv.ifname, inv.mode) != 7) {
			fprintf(stderr, "cni_latency: plan line %d: expected 7 fields\n", lineno);
			return 2;
		}
		if (run_invocation(&inv))
			return 1;
	}
	return 0;
}
