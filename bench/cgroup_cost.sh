#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# "Pods that don't opt in pay nothing". Two pods, each a netns and its own cgroup
# (siblings under one test parent); the opted-in one is wired by velo itself with
# accounting, an egress deny list and tcp-congestion.
#
# 1. Hard criterion, with BPF_ENABLE_STATS on (an fd held by this script, so
#    another process writing kernel.bpf_stats_enabled=0 can't turn it off): both
#    pods send at the same time, and velo's programs must have run exactly once
#    per packet (and per setsockopt) of the opted-in pod, i.e. zero times for
#    the non-opted pod's; the non-opted cgroup's effective program list must be
#    empty. Prints ns/run of each velo cgroup program (stats add ~75 ns/run).
# 2. A non-opted pod's 64-byte UDP send rate, the send path isolated (a C send()
#    loop to a sink in the pod's own netns that drops everything: a veth whose
#    peer is down, so veth_xmit drops each packet; this kernel has no dummy):
#      (a) nothing attached anywhere (velo DEL of the other pod)
#      (b) another pod opted in (its programs on its own cgroup)
#      (c) velo's accounting programs also on the common parent of both cgroups
#      (o) the opted-in pod itself
#    RUNS alternating rounds (a, b, c, o each once per round), medians with
#    min-max spread, ratios to (a), ns/packet differences.
# Needs root, build/velo, gcc, bpftool, jq, host-local in /usr/lib/cni. Usage:
#   bench/cgroup_cost.sh [RUNS] [SECONDS]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
velo=${VELO_BIN:-$top/build/velo}
runs=${1:-5}
secs=${2:-3}
tag="vtb$$"
mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
parent="$mnt/velotest-$tag"
bpffs="/sys/fs/bpf/velotest-$tag"
# The sender's CPU: the last one (fewer interrupts land there), same for every case.
cpu=$(($(nproc) - 1))

[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
[ -x "$velo" ] || { echo "$velo missing: run make" >&2; exit 1; }
[ -n "$mnt" ] || { echo "no cgroup2 mount" >&2; exit 1; }
if [ "$runs" -lt 1 ] || [ "$secs" -lt 1 ]; then
	echo "usage: $0 [RUNS] [SECONDS]" >&2
	exit 1
fi
work=$(mktemp -d /tmp/velotest-bench-XXXXXX)

cleanup() {
	set +e
	[ -n "${stats_pid:-}" ] && kill "$stats_pid" 2>/dev/null
	for cg in "$parent/plain" "$parent/opted"; do
		[ -f "$cg/cgroup.kill" ] && echo 1 >"$cg/cgroup.kill"
	done
	sleep 0.3
	[ -f "$work/conf" ] && velo_cni DEL >/dev/null 2>&1
	for p in $(bpftool -j cgroup show "$parent" 2>/dev/null |
		jq -r '.[] | "\(.attach_type):\(.id)"'); do
		bpftool cgroup detach "$parent" "${p%%:*}" id "${p##*:}" 2>/dev/null
	done
	for ns in plain opted node; do ip netns del "$tag-$ns" 2>/dev/null; done
	rm -rf "$bpffs" "$work"
	rmdir "$parent/plain" "$parent/opted" "$parent" 2>/dev/null
}
trap cleanup EXIT

# velo_cni COMMAND: velo ADD/DEL of the opted-in pod, run in the node netns.
velo_cni() {
	nsenter --net="/run/netns/$tag-node" env CNI_COMMAND="$1" CNI_CONTAINERID=vtb-opted \
		CNI_NETNS="/run/netns/$tag-opted" CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni \
		CNI_ARGS="K8S_POD_UID=00000000-0000-0000-0000-00000000b0b0;IgnoreUnknown=1" \
		"$velo" <"$work/conf"
}

# The sender: "udp SECONDS" prints "<packets sent> <packets per second>";
# "sockopt N" calls setsockopt(TCP_CONGESTION) N times and prints N;
# "stats 0" holds a BPF_ENABLE_STATS fd, prints "on", and waits to be killed.
cat >"$work/vtsend.c" <<'EOF'
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(9) };
	char payload[64];
	double start, end;
	long n = 0;
	int fd;

	if (argc != 3)
		return 2;
	if (!strcmp(argv[1], "stats")) {
		union bpf_attr attr = { .enable_stats = { .type = BPF_STATS_RUN_TIME } };

		if (syscall(__NR_bpf, BPF_ENABLE_STATS, &attr, sizeof(attr)) < 0) {
			perror("BPF_ENABLE_STATS");
			return 1;
		}
		printf("on\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (!strcmp(argv[1], "sockopt")) {
		long count = atol(argv[2]);

		fd = socket(AF_INET, SOCK_STREAM, 0);
		for (n = 0; n < count; n++)
			if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5)) {
				perror("setsockopt");
				return 1;
			}
		printf("%ld\n", n);
		return 0;
	}
	memset(payload, 'x', sizeof(payload));
	inet_pton(AF_INET, "198.18.0.2", &dst.sin_addr);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
		perror("socket");
		return 1;
	}
	start = now();
	end = start + atof(argv[2]);
	for (;;) {
		for (int i = 0; i < 1000; i++) {
			if (send(fd, payload, sizeof(payload), 0) != sizeof(payload)) {
				perror("send");
				return 1;
			}
		}
		n += 1000;
		if (now() >= end)
			break;
	}
	printf("%ld %.0f\n", n, n / (now() - start));
	return 0;
}
EOF
gcc -O2 -Wall -Werror -o "$work/vtsend" "$work/vtsend.c"

# A pod's netns with a sink that drops whatever it is given: a veth whose peer
# stays down (counted in vtsink0's TX dropped).
sink_netns() {
	ip netns add "$1"
	ip -n "$1" link set lo up
	ip -n "$1" link add vtsink0 type veth peer name vtsink1
	ip -n "$1" link set vtsink0 up
	ip -n "$1" addr add 198.18.0.1/24 dev vtsink0
	ip -n "$1" neigh add 198.18.0.2 lladdr 02:00:00:00:00:02 dev vtsink0 nud permanent
}

mkdir "$parent" "$parent/plain" "$parent/opted"
sink_netns "$tag-plain"
sink_netns "$tag-opted"
ip netns add "$tag-node"

# The opted-in pod through velo itself (its veth lands in the node netns).
jq -n --arg b "$bpffs" --arg s "$work/state" --arg r "$work/run" --arg l "$work/cni.log" \
	--arg d "$work/ipam" --arg cg "/velotest-$tag/opted" '{
	cniVersion: "1.0.0", name: "velotest-bench", type: "velo", vethPrefix: "vtb",
	stateDir: $s, runDir: $r, bpffsDir: $b, logFile: $l,
	ipam: {type: "host-local", dataDir: $d, ranges: [[{subnet: "10.98.0.0/24"}]]},
	runtimeConfig: {cgroupPath: $cg, "io.kubernetes.cri.pod-annotations": {
		"velo.dev/accounting": "true", "velo.dev/egress-deny": "192.0.2.0/24",
		"velo.dev/tcp-congestion": "reno"}}}' >"$work/conf"
velo_cni ADD >"$work/add.json"

# in_pod NETNS CGROUP CMD...: CMD in the pod's netns and cgroup, on the sender CPU.
in_pod() {
	local netns="$1" cg="$2"

	shift 2
	# shellcheck disable=SC2016 # expanded by the inner sh
	nsenter --net="/run/netns/$netns" taskset -c "$cpu" \
		sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}
# rate NETNS CGROUP: the pod's 64-byte UDP send rate (packets/s) over $secs seconds.
rate() { in_pod "$1" "$2" "$work/vtsend" udp "$secs" | awk '{ print $2 }'; }

# The velo cgroup programs this bench loaded: "name id" per line.
velo_progs() {
	local pin

	for pin in "$bpffs"/progs_g*/velo_cg_*; do
		echo "${pin##*/} $(bpftool -j prog show pinned "$pin" | jq .id)"
	done
}
# prog_stat ID: "run_cnt run_time_ns" of one program.
prog_stat() { bpftool -j prog show id "$1" | jq -r '"\(.run_cnt // 0) \(.run_time_ns // 0)"'; }

echo "== 1. hard criterion: BPF_ENABLE_STATS on, both pods sending at the same time"
mapfile -t progs < <(velo_progs)
effective=$(bpftool cgroup show "$parent/plain" effective)
echo "effective programs on the non-opted pod's cgroup: ${effective:-none}"
[ -z "$effective" ] || { echo "FAIL: the non-opted pod's cgroup has programs"; exit 1; }
echo "programs on the opted-in pod's cgroup:"
bpftool cgroup show "$parent/opted" | sed 's/^/  /'
declare -A run0 time0
"$work/vtsend" stats 0 >"$work/stats.out" &
stats_pid=$!
for ((i = 0; i < 50; i++)); do
	[ -s "$work/stats.out" ] && break
	sleep 0.1
done
[ "$(cat "$work/stats.out")" = on ] || { echo "BPF_ENABLE_STATS failed" >&2; exit 1; }
for p in "${progs[@]}"; do
	read -r "run0[${p% *}]" "time0[${p% *}]" < <(prog_stat "${p#* }")
done
in_pod "$tag-plain" "$parent/plain" "$work/vtsend" udp "$secs" >"$work/plain.out" &
plain_pid=$!
in_pod "$tag-opted" "$parent/opted" "$work/vtsend" udp "$secs" >"$work/opted.out"
wait "$plain_pid"
sockopts=10000
in_pod "$tag-plain" "$parent/plain" "$work/vtsend" sockopt "$sockopts" >/dev/null
in_pod "$tag-opted" "$parent/opted" "$work/vtsend" sockopt "$sockopts" >/dev/null
declare -A prog_runs prog_ns
for p in "${progs[@]}"; do
	read -r r t < <(prog_stat "${p#* }")
	prog_runs[${p% *}]=$((r - run0[${p% *}]))
	prog_ns[${p% *}]=$(((t - time0[${p% *}]) / (r - run0[${p% *}] > 0 ? r - run0[${p% *}] : 1)))
done
kill "$stats_pid"
wait "$stats_pid" 2>/dev/null || true
stats_pid=
read -r plain_sent _ <"$work/plain.out"
read -r opted_sent _ <"$work/opted.out"
echo "non-opted pod sent $plain_sent packets and $sockopts setsockopts;" \
	"opted-in pod sent $opted_sent packets and $sockopts setsockopts"
printf '  %-18s %12s %12s %8s\n' program runs expected ns/run
fail=0
for p in "${progs[@]}"; do
	name=${p% *}
	case $name in
	velo_cg_acct_eg | velo_cg_deny_eg) want=$opted_sent ;;
	velo_cg_sockopt) want=$sockopts ;;
	*) want=0 ;; # ingress: nothing comes back from a dummy sink
	esac
	printf '  %-18s %12d %12d %8s\n' "$name" "${prog_runs[$name]}" "$want" \
		"$(if [ "${prog_runs[$name]}" -gt 0 ]; then echo "${prog_ns[$name]}"; else echo -; fi)"
	[ "${prog_runs[$name]}" -eq "$want" ] || fail=1
done
if [ "$fail" -ne 0 ]; then
	echo "FAIL: velo's programs ran other than once per opted-in packet/setsockopt"
	exit 1
fi
echo "PASS: zero runs for the non-opted pod's $plain_sent packets and $sockopts setsockopts"

echo
echo "== 2. 64-byte UDP send rate, $runs alternating rounds of ${secs}s per case, CPU $cpu"
# prog_pin NAME: where this velo pinned program NAME (its BPF generation's dir, datapath/loader.h).
prog_pin() {
	local pin
	for pin in "$bpffs"/progs_g*/"$1"; do echo "$pin"; done
}
attach_parent() {
	bpftool cgroup attach "$parent" egress pinned "$(prog_pin velo_cg_acct_eg)" multi
	bpftool cgroup attach "$parent" ingress pinned "$(prog_pin velo_cg_acct_in)" multi
}
detach_parent() {
	bpftool cgroup detach "$parent" egress pinned "$(prog_pin velo_cg_acct_eg)"
	bpftool cgroup detach "$parent" ingress pinned "$(prog_pin velo_cg_acct_in)"
}
declare -a A B C O
for ((i = 0; i < runs; i++)); do
	# (a): nothing attached anywhere: velo DEL of the opted-in pod, measure, ADD again.
	velo_cni DEL >/dev/null
	[ -z "$(bpftool cgroup show "$parent/opted")" ] || { echo "DEL left programs"; exit 1; }
	A+=("$(rate "$tag-plain" "$parent/plain")")
	velo_cni ADD >/dev/null
	# (b): the opted-in pod's programs on its own cgroup only.
	B+=("$(rate "$tag-plain" "$parent/plain")")
	O+=("$(rate "$tag-opted" "$parent/opted")")
	# (c): velo's accounting also on the common parent.
	attach_parent
	C+=("$(rate "$tag-plain" "$parent/plain")")
	detach_parent
	echo "  round $((i + 1)): a ${A[i]} b ${B[i]} c ${C[i]} o ${O[i]} pps"
done

# stats VALUES...: the median and the min-max spread.
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "%s %s %s\n", m, v[1], v[NR] }'; }
# ratios NAME: the case's rate over (a) of the same round, one per round (pairs
# each run with its neighbour in time, which the node's other load shifts less).
ratios() {
	local -n xs="$1"
	for ((i = 0; i < runs; i++)); do
		awk -v x="${xs[i]}" -v y="${A[i]}" 'BEGIN { printf "%.4f\n", x / y }'
	done
}
read -r a _ < <(stats "${A[@]}")
row() { # LABEL ARRAY_NAME
	local -n values="$2"
	local m lo hi rm rlo rhi
	read -r m lo hi < <(stats "${values[@]}")
	# shellcheck disable=SC2046 # one ratio per word
	read -r rm rlo rhi < <(stats $(ratios "$2"))
	awk -v l="$1" -v m="$m" -v lo="$lo" -v hi="$hi" -v a="$a" -v rm="$rm" -v rlo="$rlo" \
		-v rhi="$rhi" 'BEGIN {
		printf "%-40s %10d %8d-%-8d %7.3f (%5.3f-%5.3f) %+8.1f\n", l, m, lo, hi, rm, rlo, rhi,
			1e9 / (a * rm) - 1e9 / a }'
}
echo
echo "vs (a): the median of per-round ratios to (a), their min-max; ns/pkt: what that"
echo "ratio adds per packet at the median rate of (a)."
printf '%-40s %10s %17s %21s %8s\n' "case (non-opted pod unless said)" "median pps" \
	"spread (min-max)" "vs (a) (min-max)" "ns/pkt"
row "(a) nothing attached" A
row "(b) another pod opted in" B
row "(c) velo's accounting on a common parent" C
row "(o) the opted-in pod itself" O
