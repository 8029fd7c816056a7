// SPDX-License-Identifier: Apache-2.0
/*
 * veloctl, the operator's CLI: `veloctl [OPTIONS] COMMAND [COMMAND OPTIONS]`.
 * Commands are a {name, fn} table like bpftool's; every one prints text for
 * people or, with -j, one JSON document for tools (errors too).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cmd_bugtool.h"
#include "cmd_endpoints.h"
#include "cmd_observe.h"
#include "cmd_policy.h"
#include "cmd_services.h"
#include "cmd_sockets.h"
#include "cmd_status.h"
#include "cmd_top.h"
#include "ctl.h"

#define GLOBAL_OPTIONS                                                                       \
	"Options (any position):\n"                                                          \
	"  -j, --json             JSON output (errors as {\"error\": ...})\n"                \
	"  -p, --pretty           indented JSON (implies -j)\n"                              \
	"      --state-dir DIR    endpoint records (default /var/lib/velo)\n"                \
	"      --run-dir DIR      locks and probe caches (default /run/velo)\n"              \
	"      --bpffs DIR        velo's bpffs pins (default /sys/fs/bpf/velo)\n"            \
	"      --log-file FILE    the plugin's log (default /var/log/velo/cni.log)\n"        \
	"      --network NAME     only this network (default: every one in the state dir)\n" \
	"      --agent HOST:PORT  velod's address (default 127.0.0.1:9099; \"\" = none)\n"   \
	"      --socket PATH      velod's local socket, for observe and policy (default\n"   \
	"                         $VELOD_SOCKET, else RUN_DIR/velod.sock; \"\" = --agent)\n" \
	"      --cni-conf-dir DIR CNI configs (default /etc/cni/net.d)\n"                    \
	"  -h, --help             help (for a command: veloctl COMMAND --help)\n"

static const struct ctl_command commands[] = {
	{ "status", cmd_ctl_status, "kernel features, velo's programs and maps, endpoints, agent",
	  "Usage: veloctl status [-j]\n"
	  "Kernel BPF features velo probes for, velo_* programs and maps (with fill),\n"
	  "endpoint counts per network and phase, and velod's /healthz.\n"
	  "Exit 3 when velod is configured but unhealthy or unreachable.\n",
	  false },
	{ "endpoints", cmd_ctl_endpoints, "the pods velo wired on this node",
	  "Usage: veloctl endpoints [-j] [--network NAME]\n"
	  "One line per endpoint record: pod, container, interfaces, addresses,\n"
	  "fast paths attached, phase, and whether its netns still exists.\n",
	  false },
	{ "sockets", cmd_ctl_sockets, "TCP connections the socket short-circuit accelerates",
	  "Usage: veloctl sockets [-j]\n"
	  "One line per connection with a socket in velo's sockhash: both pods, both\n"
	  "addresses, and whether both ends are in (accelerated) or one only (its peer\n"
	  "closed or is not in yet); then velo_smstat_v2's counters since load.\n",
	  false },
	{ "services", cmd_ctl_services, "service ports velo translates, backends, connections",
	  "Usage: veloctl services [-j]\n"
	  "One line per service port (ClusterIP x port) velod keeps for service\n"
	  "translation: its name, translations and refusals (no endpoints) since load,\n"
	  "ClientIP affinity; then each backend and the connections it got.\n",
	  false },
	{ "policy", cmd_ctl_policy, "NetworkPolicy: what selects a pod, its allow set",
	  "Usage: veloctl policy [-j] [NAMESPACE/NAME]\n"
	  "       veloctl policy [-j] why SRC_IP DST_IP PORT[/PROTO]\n"
	  "From velod's /policy, on its local socket (--socket): for the pod, the\n"
	  "NetworkPolicies that select it, whether it is isolated for ingress and egress,\n"
	  "and its effective allow set (each rule with its peers, ports and policy);\n"
	  "without a pod, one line per pod of this node; why: the verdict of a flow's\n"
	  "first packet and, side by side, the tier, rule or NetworkPolicy deciding it.\n"
	  "-j prints velod's answer as it\n"
	  "is. Exit 1 when velod can't answer.\n",
	  true },
	{ "observe", cmd_ctl_observe, "flows and drops from velod, like hubble observe",
	  "Usage: veloctl observe [-j] [-f] [--pod NS/NAME] [--namespace NS] [--ip IP]\n"
	  "                       [--port N] [--protocol P] [--verdict forwarded|dropped|audit]\n"
	  "                       [--reason NAME] [--service NS/NAME] [--since DURATION]\n"
	  "The flows velod holds (its last flowBuffer events), from its local socket\n"
	  "(--socket), oldest first, then with --follow each new one as velod reads it.\n"
	  "Filters combine; an IP, pod or port filter matches either end. -j: one JSON\n"
	  "object per line. docs/flows.md.\n"
	  "  -f, --follow            keep the stream open (until ^C)\n"
	  "      --since DURATION    only the last 30s, 5m, 2h, 1d\n"
	  "      --reason NAME       a drop reason: policy-egress-denied, egress-deny-list, ...\n"
	  "      --service NS/NAME   connects velo translated to (or refused for) that Service\n",
	  false },
	{ "top", cmd_ctl_top, "per-program BPF cost (runs/s, ns/run, CPU)",
	  "Usage: veloctl top [-i SECONDS] [-n COUNT] [-a] [-j]\n"
	  "Holds a BPF_ENABLE_STATS fd while it runs and shows, per velo_* program, the\n"
	  "runs per second, ns per run and CPU share over each interval.\n"
	  "  -i, --interval SECONDS  window length (default 2)\n"
	  "  -n, --iterations COUNT  stop after COUNT windows (default: until ^C; 1 with -j)\n"
	  "  -a, --all               every BPF program on the node, not only velo's\n"
	  "While it runs, every BPF program on the node pays ~75 ns per run for the stats.\n",
	  false },
	{ "bugtool", cmd_ctl_bugtool, "one archive with what a maintainer needs",
	  "Usage: veloctl bugtool [-o FILE]\n"
	  "Writes a tar.gz with the CNI configs, velo's logs and state files, bpftool\n"
	  "dumps, ip link/addr/route/neigh/rule, tc filters of velo's veths, and\n"
	  "veloctl status/endpoints/sockets output. Prints the archive's path.\n"
	  "  -o, --output FILE  archive path (default ./velo-bugtool-<host>-<time>.tar.gz)\n",
	  false },
};

enum {
	OPT_STATE_DIR = 256,
	OPT_RUN_DIR,
	OPT_BPFFS,
	OPT_LOG_FILE,
	OPT_NETWORK,
	OPT_AGENT,
	OPT_SOCKET,
	OPT_CNI_CONF_DIR,
	OPT_OBSERVE, /* observe's options: cmd_observe_option() takes them by name */
};

static const struct option options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "pretty", no_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "bpffs", required_argument, NULL, OPT_BPFFS },
	{ "log-file", required_argument, NULL, OPT_LOG_FILE },
	{ "network", required_argument, NULL, OPT_NETWORK },
	{ "agent", required_argument, NULL, OPT_AGENT },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "cni-conf-dir", required_argument, NULL, OPT_CNI_CONF_DIR },
	{ "interval", required_argument, NULL, 'i' },
	{ "iterations", required_argument, NULL, 'n' },
	{ "all", no_argument, NULL, 'a' },
	{ "output", required_argument, NULL, 'o' },
	{ "follow", no_argument, NULL, 'f' },
	{ "pod", required_argument, NULL, OPT_OBSERVE },
	{ "namespace", required_argument, NULL, OPT_OBSERVE },
	{ "service", required_argument, NULL, OPT_OBSERVE },
	{ "ip", required_argument, NULL, OPT_OBSERVE },
	{ "port", required_argument, NULL, OPT_OBSERVE },
	{ "protocol", required_argument, NULL, OPT_OBSERVE },
	{ "verdict", required_argument, NULL, OPT_OBSERVE },
	{ "reason", required_argument, NULL, OPT_OBSERVE },
	{ "since", required_argument, NULL, OPT_OBSERVE },
	{},
};

static const char *option_name(int opt)
{
	for (const struct option *option = options; option->name; option++)
		if (option->val == opt)
			return option->name;
	return "?";
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: veloctl [OPTIONS] COMMAND [COMMAND OPTIONS]\n\nCommands:\n");
	for (unsigned i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "  %-10s %s\n\n%s", "help", "this text (help COMMAND: the command's)",
		GLOBAL_OPTIONS);
	fprintf(out,
		"\nExit codes: 0 ok, 1 failed, 2 usage error, 3 status found velo unhealthy.\n");
}

static const struct ctl_command *find_command(const char *name)
{
	for (unsigned i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int set_path(char *dst, size_t len, const char *value)
{
	if (!*value || strlen(value) >= len)
		return -EINVAL;
	memcpy(dst, value, strlen(value) + 1);
	return 0;
}

static void ctl_defaults(struct ctl *ctl)
{
	snprintf(ctl->paths.state_dir, sizeof(ctl->paths.state_dir), "/var/lib/velo");
	snprintf(ctl->paths.run_dir, sizeof(ctl->paths.run_dir), "/run/velo");
	snprintf(ctl->paths.bpffs_dir, sizeof(ctl->paths.bpffs_dir), "/sys/fs/bpf/velo");
	snprintf(ctl->paths.log_file, sizeof(ctl->paths.log_file), "/var/log/velo/cni.log");
	snprintf(ctl->agent, sizeof(ctl->agent), "127.0.0.1:9099");
	snprintf(ctl->cni_conf_dir, sizeof(ctl->cni_conf_dir), "/etc/cni/net.d");
	ctl->interval_s = 2;
	ctl->iterations = -1; /* not given */
}

/* --socket's default, once --run-dir is known: $VELOD_SOCKET, else RUN_DIR/velod.sock. */
static int local_socket_default(struct ctl *ctl)
{
	const char *env = getenv("VELOD_SOCKET");
	int n;

	if (ctl->socket_set)
		return 0;
	if (env)
		n = snprintf(ctl->socket, sizeof(ctl->socket), "%s", env);
	else
		n = snprintf(ctl->socket, sizeof(ctl->socket), "%s/velod.sock", ctl->paths.run_dir);
	if (n < 0 || (size_t)n >= sizeof(ctl->socket) || (ctl->socket[0] && ctl->socket[0] != '/'))
		return -EINVAL;
	return 0;
}

/* Parses one option into ctl; -EINVAL for a bad value. */
static int parse_option(struct ctl *ctl, int opt, const char *arg)
{
	char *end;

	switch (opt) {
	case 'j':
		ctl->json = true;
		return 0;
	case 'p':
		ctl->json = ctl->pretty = true;
		return 0;
	case 'a':
		ctl->all_progs = true;
		return 0;
	case OPT_STATE_DIR:
		return set_path(ctl->paths.state_dir, sizeof(ctl->paths.state_dir), arg);
	case OPT_RUN_DIR:
		return set_path(ctl->paths.run_dir, sizeof(ctl->paths.run_dir), arg);
	case OPT_BPFFS:
		return set_path(ctl->paths.bpffs_dir, sizeof(ctl->paths.bpffs_dir), arg);
	case OPT_LOG_FILE:
		return set_path(ctl->paths.log_file, sizeof(ctl->paths.log_file), arg);
	case OPT_NETWORK:
		if (strchr(arg, '/'))
			return -EINVAL;
		return set_path(ctl->network, sizeof(ctl->network), arg);
	case OPT_AGENT:
		if (strlen(arg) >= sizeof(ctl->agent))
			return -EINVAL;
		snprintf(ctl->agent, sizeof(ctl->agent), "%s", arg);
		return 0;
	case OPT_SOCKET:
		if (strlen(arg) >= sizeof(ctl->socket) || (arg[0] && arg[0] != '/'))
			return -EINVAL;
		snprintf(ctl->socket, sizeof(ctl->socket), "%s", arg);
		ctl->socket_set = true;
		return 0;
	case OPT_CNI_CONF_DIR:
		return set_path(ctl->cni_conf_dir, sizeof(ctl->cni_conf_dir), arg);
	case 'o':
		return set_path(ctl->output, sizeof(ctl->output), arg);
	case 'i':
		errno = 0;
		ctl->interval_s = strtod(arg, &end);
		return errno || *end || ctl->interval_s < 0.1 || ctl->interval_s > 3600 ? -EINVAL
											: 0;
	case 'n':
		errno = 0;
		ctl->iterations = strtol(arg, &end, 10);
		return errno || *end || ctl->iterations < 1 ? -EINVAL : 0;
	default:
		return -EINVAL;
	}
}

int main(int argc, char **argv)
{
	struct ctl ctl = { .argv0 = argv[0], .argv = argv, .argc = argc };
	const struct ctl_command *command = NULL;
	const char *name;
	bool help = false;
	int opt, ret, index = 0;

	ctl_defaults(&ctl);
	/* Plugin code logs warnings (e.g. an unreadable record) on stderr only. */
	log_open(NULL, VELO_LOG_WARN, 0);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":jphafi:n:o:", options, &index)) != -1) {
		if (opt == 'h') {
			help = true;
			continue;
		}
		if (opt == '?' || opt == ':') {
			ctl_error(&ctl, "%s: %s",
				  opt == ':' ? "option needs a value" : "unknown option",
				  argv[optind - 1]);
			return CTL_EXIT_USAGE;
		}
		if (opt == 'f' || opt == OPT_OBSERVE) {
			/* observe's: named by the option that matched. */
			const char *long_name = opt == 'f' ? "follow" : options[index].name;

			if (cmd_observe_option(long_name, optarg)) {
				ctl_error(&ctl, "bad value for --%s: '%s'", long_name, optarg);
				return CTL_EXIT_USAGE;
			}
		} else if (parse_option(&ctl, opt, optarg)) {
			ctl_error(&ctl, "bad value for --%s: '%s'", option_name(opt), optarg);
			return CTL_EXIT_USAGE;
		}
	}
	if (local_socket_default(&ctl)) {
		ctl_error(&ctl, "bad value for VELOD_SOCKET: an absolute path, or \"\"");
		return CTL_EXIT_USAGE;
	}
	name = optind < argc ? argv[optind] : NULL;
	if (name && !strcmp(name, "help")) {
		help = true;
		name = optind + 1 < argc ? argv[optind + 1] : NULL;
	}
	if (name) {
		command = find_command(name);
		if (!command) {
			ctl_error(&ctl, "unknown command '%s' (veloctl help lists them)", name);
			return CTL_EXIT_USAGE;
		}
	}
	if (help) {
		if (command)
			printf("%s\n%s", command->usage, GLOBAL_OPTIONS);
		else
			usage(stdout);
		return CTL_EXIT_OK;
	}
	if (!command) {
		usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (command->operand && optind + 1 < argc)
		ctl.argument = argv[++optind];
	/* veloctl policy why SRC DST PORT/PROTO */
	if (command->run == cmd_ctl_policy && ctl.argument && !strcmp(ctl.argument, "why")) {
		if (optind + 3 >= argc) {
			ctl_error(&ctl, "policy why: needs SRC DST PORT/PROTO");
			return CTL_EXIT_USAGE;
		}
		for (unsigned i = 0; i < 3; i++)
			ctl.why[i] = argv[++optind];
	}
	if (optind + 1 < argc) {
		ctl_error(&ctl, "%s: unexpected argument '%s'", command->name, argv[optind + 1]);
		return CTL_EXIT_USAGE;
	}
	ret = command->run(&ctl);
	log_close();
	return ret;
}
