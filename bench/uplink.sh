#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cross-node pod-to-pod traffic with velod's uplinkXdp on the receiving node vs the routed path.
# Two simulated nodes (network namespaces) on an underlay bridge, velo and velod in each; a
# client pod on node 1 (routed) sends to a server pod on node 2 with velo.dev/fastpath "xdp"
# (so it can take redirects in both modes). Modes: "xdp" (node 2's velod runs with uplinkXdp
# "ul0": frames from node 1 go from the uplink's XDP straight into the pod's veth) and "routed"
# (uplinkXdp false: the same frames go through node 2's stack). velod is restarted to switch.
# Classes: UDP 64 B (bench/dp_traffic.c, kpps received), the one the program redirects; TCP
# stream with 128 KiB writes (iperf3, Gbit/s received), which takes node 2's stack in both modes
# (the program passes TCP: docs/uplink.md) and so shows what the program costs on what it passes. Repetitions alternate the mode order; medians, min-max and the
# xdp/routed ratio of the medians, plus the median of the per-repetition ratios.
#
# THE UPLINK IS A VETH, NOT A NIC: a veth with XDP loses GSO on its peer and hands XDP one
# frame at a time; a real NIC's driver XDP runs before any skb exists. These numbers say what
# the redirect costs or saves on veth, nothing about a NIC. The underlay side of node 2's
# uplink sends full checksums (ethtool tx off, as a wire delivers them) in both modes.
#
# Everything lives in namespaces velobench-ul-PID-*; velo's state and bpffs under
# /tmp/velobench-ul-XXXXXX; all removed at exit. Traffic only between these namespaces.
#
# Usage (as root): bench/uplink.sh [-o OUTDIR] [-r REPS] [-t SECONDS]
#   -o OUTDIR   uplink.md (the table) and uplink.csv (samples) there; else both on stdout
#   -r REPS     alternating repetitions ($UL_REPS, 5)
#   -t SECONDS  per measurement ($UL_SECS, 3)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

reps=${UL_REPS:-5}
secs=${UL_SECS:-3}
outdir=""
while getopts "o:r:t:h" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	r) reps=$OPTARG ;;
	t) secs=$OPTARG ;;
	*) sed -n 's/^# \{0,1\}//; 21,24p' "$0" >&2; exit 2 ;;
	esac
done
for value in "$reps" "$secs"; do
	[[ $value =~ ^[1-9][0-9]*$ ]] || { echo "uplink: counts must be positive integers" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "uplink: needs root (network namespaces, BPF)" >&2; exit 1; }
ref_dir=/usr/lib/cni
velo=${VELO:-$top/build/velo}
velod=${VELOD:-$top/build/velod}
# shellcheck source=bench/lib.bash
source "$top/bench/lib.bash"
bench_need uplink "$ref_dir/host-local" "$velo" "$velod" -- iperf3 jq ethtool curl

velod2=""
more_pids() { echo "$velod2"; }
# The underlay (bridge), node 1 and node 2 on it, forwarding off at start as on a fresh node.
bench_two_nodes_start velobench-ul vbul 192.168.78
in_ns ul ethtool -K vbul2 tx off >/dev/null
jq -n '{nodes: [{name: "n1", addresses: ["192.168.78.1"], podCIDRs: ["10.78.1.0/24"]},
	{name: "n2", addresses: ["192.168.78.2"], podCIDRs: ["10.78.2.0/24"]}]}' >"$work/nodes.json"

# start_velod N EXTRA_JSON: velod on node N; sets velod_pid (nsenter execs velod: $! is velod).
start_velod() {
	jq -n --arg t "$work/n$1" --arg n "n$1" --arg f "$work/nodes.json" --arg bin "$ref_dir" \
		--argjson x "$2" '{stateDir: ($t + "/state"), runDir: ($t + "/run"),
		bpffsDir: ($t + "/bpf/velo"), cniPath: $bin, listen: "127.0.0.1:19399",
		reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, nodeName: $n, nodesFile: $f,
		routeSyncSeconds: 1} + $x' >"$work/n$1/velod.json"
	nsenter --net="/run/netns/$ns-n$1" "$velod" --config "$work/n$1/velod.json" \
		>/dev/null 2>>"$work/n$1/velod.log" &
	velod_pid=$!
}

# set_mode xdp|routed: restarts node 2's velod with uplinkXdp on or off, checks the result.
set_mode() {
	local want=false i attached
	[ "$1" = xdp ] && want='"ul0"'
	if [ -n "$velod2" ]; then
		kill "$velod2"
		wait "$velod2" 2>/dev/null || true
	fi
	start_velod 2 "{\"uplinkXdp\": $want}"
	velod2=$velod_pid
	for i in $(seq 50); do
		in_ns n2 curl -sf http://127.0.0.1:19399/metrics >/dev/null 2>&1 && break
		sleep 0.1
	done
	attached=routed
	in_ns n2 ip link show ul0 | grep -q prog/xdp && attached=xdp
	if [ "$attached" != "$1" ]; then
		echo "uplink: node 2's uplink XDP is not $1 as asked (see $work/n2/velod.log)" >&2
		exit 1
	fi
}

redirects() {
	in_ns n2 curl -sf http://127.0.0.1:19399/metrics |
		awk '$1 == "velo_uplink_xdp_redirect_packets_total" { print $2; f = 1 } END { if (!f) print 0 }'
}

start_velod 1 '{}'
pids+=("$velod_pid")
set_mode xdp
client_ip=$(bench_two_nodes_pod 1 c 10.78 '{}')
server_ip=$(bench_two_nodes_pod 2 s 10.78 \
	'{"runtimeConfig": {"io.kubernetes.cri.pod-annotations": {"velo.dev/fastpath": "xdp"}}}')
for i in $(seq 50); do
	in_ns c ping -c 1 -W 1 "$server_ip" >/dev/null 2>&1 && break
	[ "$i" = 50 ] && { echo "uplink: client $client_ip cannot reach server $server_ip" >&2; exit 1; }
	sleep 0.2
done
nsenter --net="/run/netns/$ns-s" iperf3 -s -p 5201 >/dev/null 2>&1 &
pids+=("$!")
sleep 0.3

# measure tcp|udp: one value (Gbit/s or kpps received), NA on failure.
measure() {
	local sink=$work/sink.out spid i
	case $1 in
	tcp) bench_iperf_gbit "$ns-c" "$server_ip" "$secs" ;;
	udp)
		in_ns s timeout $((secs + 40)) "$traffic" udp-sink 5300 >"$sink" 2>&1 &
		spid=$!
		for i in $(seq 200); do grep -qs ready "$sink" && break; sleep 0.02; done
		in_ns c "$traffic" udp-blast "$server_ip" 5300 64 "$secs" >/dev/null || true
		wait "$spid" || { echo NA; return; }
		sed -n 2p "$sink" | awk '{ print $1 }'
		;;
	esac
}

csv=$work/samples.csv
echo "rep,class,mode,value,redirects" >"$csv"
echo "uplink: cross-node, client on node 1 -> XDP pod on node 2; $reps repetitions, ${secs}s each;" \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
for ((rep = 1; rep <= reps; rep++)); do
	modes="xdp routed"
	((rep % 2)) || modes="routed xdp"
	for mode in $modes; do
		set_mode "$mode"
		for class in tcp udp; do
			before=$(redirects)
			value=$(measure "$class")
			echo "$rep,$class,$mode,$value,$(($(redirects) - before))" >>"$csv"
			printf '  rep %d %-6s %-3s %8s %s  (uplink redirects %d)\n' "$rep" "$mode" "$class" "$value" \
				"$([ "$class" = tcp ] && echo Gbit/s || echo kpps)" "$(($(redirects) - before))"
		done
	done
done

summary() {
	echo "uplink: medians over $reps repetitions (min-max); ratio = xdp / routed. Uplink: a veth, not a NIC."
	printf '%-26s %-22s %-22s %-8s %s\n' class xdp routed ratio "median of per-rep ratios"
	for class in tcp udp; do
		awk -F, -v c="$class" '
			function median(a, n,   i, j, t) {
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
				return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			}
			$2 == c && $4 != "NA" { v[$3, ++n[$3]] = $4; by_rep[$1, $3] = $4 }
			END {
				for (m = 1; m <= 2; m++) {
					mode = m == 1 ? "xdp" : "routed"
					k = 0; lo = ""; hi = ""
					for (i = 1; i <= n[mode]; i++) { x[++k] = v[mode, i]; if (lo == "" || x[k] < lo) lo = x[k]; if (hi == "" || x[k] > hi) hi = x[k] }
					med[mode] = k ? median(x, k) : "NA"; span[mode] = k ? sprintf("%.3g (%.3g-%.3g)", med[mode], lo, hi) : "NA"
				}
				k = 0
				for (key in by_rep) { split(key, p, SUBSEP); if (p[2] == "xdp" && ((p[1], "routed") in by_rep) && by_rep[p[1], "routed"] > 0) r[++k] = by_rep[key] / by_rep[p[1], "routed"] }
				title = c == "tcp" ? "TCP 128 KiB stream Gbit/s" : "UDP 64 B kpps received"
				printf "%-26s %-22s %-22s %-8s %s\n", title, span["xdp"], span["routed"],
					(med["routed"] > 0 && med["xdp"] != "NA") ? sprintf("%.2f", med["xdp"] / med["routed"]) : "NA",
					k ? sprintf("%.2f", median(r, k)) : "NA"
			}' "$csv"
	done
	echo "uplink: $(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs, load average" \
		"$(cut -d' ' -f1-3 /proc/loadavg)"
}

echo
if [ -n "$outdir" ]; then
	mkdir -p "$outdir"
	summary | tee "$outdir/uplink.md"
	cp "$csv" "$outdir/uplink.csv"
	echo "uplink: results in $outdir/uplink.md, samples in $outdir/uplink.csv"
else
	summary
	echo "uplink: samples:"
	cat "$csv"
fi
