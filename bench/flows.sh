#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What flow events cost, in one run: routed and tc pod pairs with connection events off and on
# (velo.dev/flows on both pods), TCP 64-byte request/response p50 (bench/dp_traffic.c) and
# short connections per second (bench/flows_conn.c), alternating off/on per repetition, medians
# and on/off ratios; then velod's CPU while a pod's deny list drops a UDP flood (every drop one
# event): events read per second and velod's CPU share over the flood.
#
# Topology: a node netns velobench-fl-PID, two pod netns per path (server s, client c), every pod
# in a cgroup velobench-fl-PID-* under the cgroup2 mount (both modes, so only the program
# differs); velo's state, bpffs and log under /tmp/velobench-fl-XXXXXX; velod in the node.
# Traffic only between these namespaces. Everything is removed at exit, pass or fail.
#
# Usage (as root): bench/flows.sh [-o OUTDIR] [-r REPS] [-n RR_COUNT] [-k CONNS] [-t FLOOD_SECONDS]
#   -o OUTDIR  flows.md, flows.csv and each repetition's connection rates (flows_samples.txt)
#              there (build/bench)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
outdir=$top/build/bench
reps=3 rr_count=20000 conns=3000 flood_s=3
while getopts "o:r:n:k:t:" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	r) reps=$OPTARG ;;
	n) rr_count=$OPTARG ;;
	k) conns=$OPTARG ;;
	t) flood_s=$OPTARG ;;
	*) exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "flows: needs root" >&2; exit 1; }
velo=${VELO:-$top/build/velo}
velod=${VELOD:-$top/build/velod}
ref_dir=/usr/lib/cni
# shellcheck source=bench/lib.bash
source "$top/bench/lib.bash"
cgmount=$(bench_cgroup2_mount)
[ -n "$cgmount" ] || { echo "flows: no cgroup2 mount" >&2; exit 1; }
bench_node_start flows velobench-fl

bench_cc "$work/dp_traffic" "$top/bench/dp_traffic.c"
bench_cc "$work/flows_conn" "$top/bench/flows_conn.c"

port=$((20000 + RANDOM % 20000))
jq -n --arg w "$work" --arg l "127.0.0.1:$port" '{stateDir: ($w + "/state"),
	runDir: ($w + "/run"), bpffsDir: ($w + "/bpf/velo"), listen: $l,
	reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, reapIntervalMs: 0,
	sourceGuardPrefix: "", nodeName: "bench"}' >"$work/velod.json"
mkdir -p "$work/run"

# config ANNOTATIONS CGROUP_REL
config() {
	jq -cn --arg w "$work" --argjson a "$1" --arg cg "$2" '{
		cniVersion: "1.0.0", name: "velobench-flows", type: "velo", vethPrefix: "vf", mtu: 1500,
		stateDir: ($w + "/state"), runDir: ($w + "/run"), bpffsDir: ($w + "/bpf/velo"),
		logFile: ($w + "/cni.log"),
		ipam: {type: "host-local", dataDir: ($w + "/ipam"), ranges: [[{subnet: "10.248.7.0/24"}]]},
		runtimeConfig: {"io.kubernetes.cri.pod-annotations": $a, cgroupPath: $cg}}'
}
declare -A pod_ns pod_cg pod_ip
# add_pod KEY ANNOTATIONS
add_pod() {
	local ns=velobench-fl-$tag-$1 rel=/velobench-fl-$tag-$1 out
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	# Thousands of short connections a repetition: without these the client's ports, held in
	# TIME_WAIT for 60 s, run out by the 9th repetition and its rate falls to ~1,000/s.
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_port_range="1024 65535" \
		net.ipv4.tcp_tw_reuse=1
	mkdir "$cgmount$rel"
	pod_cg[$1]=$cgmount$rel
	out=$(config "$2" "$rel" | in_node env -i PATH="$PATH" CNI_COMMAND=ADD \
		CNI_CONTAINERID="velobench-fl-$1" CNI_NETNS="/run/netns/$ns" CNI_IFNAME=eth0 \
		CNI_PATH="$ref_dir" "$velo") || { echo "flows: ADD $1 failed: $out" >&2; exit 1; }
	pod_ns[$1]=$ns
	pod_ip[$1]=$(jq -r '.ips[0].address | split("/")[0]' <<<"$out")
}
in_pod() {
	local key=$1
	shift
	# shellcheck disable=SC2016
	nsenter --net="/run/netns/${pod_ns[$key]}" sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' \
		sh "${pod_cg[$key]}" "$@"
}

cases="routed-off routed-on tc-off tc-on"
for c in $cases; do
	fp=off
	[[ $c == tc-* ]] && fp=tc
	fl=false
	[[ $c == *-on ]] && fl=true
	ann=$(jq -cn --arg fp "$fp" --arg fl "$fl" '{"velo.dev/fastpath": $fp, "velo.dev/flows": $fl}')
	add_pod "$c-s" "$ann"
	add_pod "$c-c" "$ann"
	in_pod "$c-s" "$work/dp_traffic" rr-server 5400 >/dev/null 2>&1 &
	pids+=("$!")
	in_pod "$c-s" "$work/flows_conn" server 5500 >/dev/null 2>&1 &
	pids+=("$!")
done
# nsenter execs velod: $! is velod itself (its CPU is measured below).
nsenter --net="/run/netns/$node" "$velod" --config "$work/velod.json" 2>"$work/velod.log" &
velod_pid=$!
pids+=("$velod_pid")
sleep 0.5
for c in $cases; do
	in_pod "$c-c" ping -c 1 -W 2 "${pod_ip[$c-s]}" >/dev/null || { echo "flows: $c unreachable" >&2; exit 1; }
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A rr conn
for ((r = 0; r < reps; r++)); do
	for c in $cases; do
		rr[$c]+="$(in_pod "$c-c" "$work/dp_traffic" rr-client tcp "${pod_ip[$c-s]}" 5400 "$rr_count" | awk '{ print $1 }') "
		conn[$c]+="$(in_pod "$c-c" "$work/flows_conn" client "${pod_ip[$c-s]}" 5500 "$conns") "
	done
done

mkdir -p "$outdir"
md=$outdir/flows.md csv=$outdir/flows.csv
: >"$outdir/flows_samples.txt"
# paired NUMERATORS DENOMINATORS: the median of the repetitions' own ratios (each "on" sample
# was taken right after its "off" one, so a machine that slows down between repetitions cancels).
paired() {
	paste -d' ' <(tr ' ' '\n' <<<"$1" | grep .) <(tr ' ' '\n' <<<"$2" | grep .) |
		awk '{ printf "%.6f\n", $1 / $2 }' | median
}
echo "path,rr_p50_off_us,rr_p50_on_us,conns_off,conns_on,conns_paired_off_on" >"$csv"
printf '| path | TCP_RR p50 off (us) | on (us) | on/off (<= 1.05) | conns/s off | on | off/on (<= 1.05) | off/on, paired |\n|---|---|---|---|---|---|---|---|\n' >"$md"
for p in routed tc; do
	a=$(tr ' ' '\n' <<<"${rr[$p-off]}" | grep . | median)
	b=$(tr ' ' '\n' <<<"${rr[$p-on]}" | grep . | median)
	x=$(tr ' ' '\n' <<<"${conn[$p-off]}" | grep . | median)
	y=$(tr ' ' '\n' <<<"${conn[$p-on]}" | grep . | median)
	z=$(paired "${conn[$p-off]}" "${conn[$p-on]}")
	printf '| %s | %s | %s | %.3f | %s | %s | %.3f | %.3f |\n' "$p" "$a" "$b" \
		"$(echo "$b / $a" | bc -l)" "$x" "$y" "$(echo "$x / $y" | bc -l)" "$z" >>"$md"
	echo "$p,$a,$b,$x,$y,$z" >>"$csv"
	echo "$p conns/s off: ${conn[$p-off]}" >>"$outdir/flows_samples.txt"
	echo "$p conns/s on:  ${conn[$p-on]}" >>"$outdir/flows_samples.txt"
done
echo "($reps repetitions alternating off/on, medians; $rr_count round trips, $conns connections each)" >>"$md"

# The "on" pods did report: a start and an end per connection, from the client's socket only.
sleep 0.3
events=$(in_node curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "velo_flow_events_total" { print $2 }')
lost=$(in_node curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "velo_flow_events_lost_total" { print $2 }')
on_conns=$((reps * 2 * (conns + 1)))
echo "connection events: $events read, $lost lost, for $on_conns connections with flows on" >>"$md"
[ "$((events + lost))" -ge "$((2 * on_conns))" ] ||
	{ cat "$md"; echo "flows: fewer events than 2 per connection" >&2; exit 1; }

# velod reading a drop flood: a pod whose deny list refuses every datagram it sends.
add_pod flood "{\"velo.dev/egress-deny\": \"10.248.7.254/32\"}"
before=$(in_node curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "velo_flow_events_total" { print $2 }')
lost0=$(in_node curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "velo_flow_events_lost_total" { print $2 }')
out0=$(in_node curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "velo_flow_events_sampled_out_total" { print $2 }')
read -r _ _ _ _ _ _ _ _ _ _ _ _ _ u0 s0 _ < <(cat "/proc/$velod_pid/stat")
t0=$(date +%s.%N)
rate=$(in_pod flood "$work/flows_conn" flood 10.248.7.254 9 "$flood_s")
sleep 0.3
t1=$(date +%s.%N)
read -r _ _ _ _ _ _ _ _ _ _ _ _ _ u1 s1 _ < <(cat "/proc/$velod_pid/stat")
after=$(in_node curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "velo_flow_events_total" { print $2 }')
lost1=$(in_node curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "velo_flow_events_lost_total" { print $2 }')
out1=$(in_node curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "velo_flow_events_sampled_out_total" { print $2 }')
hz=$(getconf CLK_TCK)
cpu=$(echo "($u1 + $s1 - $u0 - $s0) / $hz / ($t1 - $t0) * 100" | bc -l)
printf '\nflood: %s drops/s offered for %ss; velod read %.0f events/s (%s read, %s sampled out, %s lost); velod CPU %.1f%% of one core\n' \
	"$rate" "$flood_s" "$(echo "($after - $before) / ($t1 - $t0)" | bc -l)" "$((after - before))" \
	"$((out1 - out0))" "$((lost1 - lost0))" "$cpu" >>"$md"
cat "$md"
