#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cross-node pod-to-pod traffic over velod's routingMode vxlan against host-gw, in one run.
# Two simulated nodes (network namespaces) on an underlay bridge, velo and velod in each; both
# velods are restarted in the other mode to switch (velod removes the VXLAN devices going to
# host-gw and makes them again going to vxlan). Each mode has its own pod pair, wired as ADD
# wires pods under it: the host-gw pair with the node's MTU (1500), the vxlan pair with velod's
# overhead taken off (1450). Classes: one TCP stream with 128 KiB writes (iperf3, Gbit/s
# received) and TCP 64 B request/response (bench/dp_traffic.c, p50 and p99 in us). Repetitions
# alternate the mode order; medians, min-max and the vxlan/host-gw ratio of the medians, plus
# the median of the per-repetition ratios. Targets (issue 41): stream >= 0.85x, TCP_RR p50
# <= 1.1x.
#
# THE UNDERLAY IS A VETH PAIR ON A BRIDGE, NOT A NIC: the encapsulation's cost here is the
# kernel's (VXLAN with GSO/GRO over veth); NIC offloads of outer checksums and UDP tunnels are
# not in it.
#
# Everything lives in namespaces velobench-rt-PID-*; velo's state and bpffs under
# /tmp/velobench-rt-XXXXXX; all removed at exit. Traffic only between these namespaces.
#
# Usage (as root): bench/routing.sh [-r REPS] [-t SECONDS] [-n RR_COUNT]
#   -r REPS      alternating repetitions ($RT_REPS, 5)
#   -t SECONDS   per stream measurement ($RT_SECS, 3)
#   -n RR_COUNT  round trips per request/response run ($RT_RR, 20000)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

reps=${RT_REPS:-5}
secs=${RT_SECS:-3}
rr_count=${RT_RR:-20000}
while getopts "r:t:n:h" opt; do
	case $opt in
	r) reps=$OPTARG ;;
	t) secs=$OPTARG ;;
	n) rr_count=$OPTARG ;;
	*) sed -n 's/^# \{0,1\}//; 21,24p' "$0" >&2; exit 2 ;;
	esac
done
for value in "$reps" "$secs" "$rr_count"; do
	[[ $value =~ ^[1-9][0-9]*$ ]] || { echo "routing: counts must be positive integers" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "routing: needs root (network namespaces, BPF)" >&2; exit 1; }
ref_dir=/usr/lib/cni
velo=${VELO:-$top/build/velo}
velod=${VELOD:-$top/build/velod}
# shellcheck source=bench/lib.bash
source "$top/bench/lib.bash"
bench_need routing "$ref_dir/host-local" "$velo" "$velod" -- iperf3 jq curl

tag=$$
ns=velobench-rt-$tag
work=$(mktemp -d /tmp/velobench-rt-XXXXXX)
pids=()
velods=()
cleanup() { bench_two_nodes_cleanup "$ns" "$work" "${pids[@]}" "${velods[@]}"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

traffic=$work/dp_traffic
bench_cc "$traffic" "$top/bench/dp_traffic.c"

in_ns() { local n=$1; shift; nsenter --net="/run/netns/$ns-$n" "$@"; }

# The underlay (bridge), node 1 and node 2 on it, forwarding off at start as on a fresh node.
bench_two_nodes "$ns" vbrt 192.168.79
mkdir -p "$work/n1" "$work/n2"
jq -n '{nodes: [{name: "n1", addresses: ["192.168.79.1"], podCIDRs: ["10.79.1.0/24"]},
	{name: "n2", addresses: ["192.168.79.2"], podCIDRs: ["10.79.2.0/24"]}]}' >"$work/nodes.json"

# set_mode MODE: both nodes' velods (re)started in routingMode MODE; waits for node 1's route
# to node 2's pods to take that mode's form.
set_mode() {
	local n pid want="10.79.2.0/24 via 192.168.79.2 dev ul0"
	[ "$1" = vxlan ] && want="10.79.2.0/24 via 10.79.2.0 dev velo.vxlan onlink"
	for pid in "${velods[@]}"; do
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	done
	velods=()
	for n in 1 2; do
		jq -n --arg t "$work/n$n" --arg n "n$n" --arg f "$work/nodes.json" --arg bin "$ref_dir" \
			--arg m "$1" '{stateDir: ($t + "/state"), runDir: ($t + "/run"),
			bpffsDir: ($t + "/bpf/velo"), cniPath: $bin, listen: "", localSocket: "",
			reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, nodeName: $n,
			nodesFile: $f, routeSyncSeconds: 1, routingMode: $m}' >"$work/n$n/velod.json"
		nsenter --net="/run/netns/$ns-n$n" "$velod" --config "$work/n$n/velod.json" \
			>/dev/null 2>>"$work/n$n/velod.log" &
		velods+=("$!")
	done
	for _ in $(seq 100); do
		if in_ns n1 ip route show proto 118 | grep -q "^$want" &&
			in_ns n2 ip route show proto 118 | grep -q "^10.79.1.0/24"; then
			return 0
		fi
		sleep 0.05
	done
	echo "routing: node 1 has no $1 route to node 2's pods (see $work/n1/velod.log)" >&2
	exit 1
}

# add_pod N NAME MTU: a pod on node N with that MTU (as ADD gives it under the mode); prints
# its IPv4 address.
add_pod() {
	ip netns add "$ns-$2"
	ip -n "$ns-$2" link set lo up
	jq -cn --arg t "$work/n$1" --arg n "$1" --argjson mtu "$3" '{cniVersion: "1.0.0",
		name: "velobench-rt", type: "velo", vethPrefix: "vb", stateDir: ($t + "/state"),
		runDir: ($t + "/run"), bpffsDir: ($t + "/bpf/velo"), logFile: ($t + "/cni.log"),
		mtu: $mtu, ipam: {type: "host-local", dataDir: ($t + "/ipam"),
			ranges: [[{subnet: ("10.79." + $n + ".0/24")}]]}}' >"$work/$2.conf"
	in_ns "n$1" env -i PATH="$PATH" CNI_COMMAND=ADD CNI_CONTAINERID="velobench-$2" \
		CNI_NETNS="/run/netns/$ns-$2" CNI_IFNAME=eth0 CNI_PATH="$ref_dir" "$velo" \
		<"$work/$2.conf" | jq -r '.ips[0].address | sub("/.*"; "")'
}

declare -A ip
set_mode host-gw
ip[c-host-gw]=$(add_pod 1 c-host-gw 1500)
ip[s-host-gw]=$(add_pod 2 s-host-gw 1500)
ip[c-vxlan]=$(add_pod 1 c-vxlan 1450)
ip[s-vxlan]=$(add_pod 2 s-vxlan 1450)
for mode in host-gw vxlan; do
	nsenter --net="/run/netns/$ns-s-$mode" iperf3 -s -p 5201 >/dev/null 2>&1 &
	pids+=("$!")
	nsenter --net="/run/netns/$ns-s-$mode" "$traffic" rr-server 5400 >/dev/null 2>&1 &
	pids+=("$!")
done
sleep 0.3

# measure MODE stream|rr: Gbit/s, or "p50 p99" in us; NA on failure.
measure() {
	local out
	case $2 in
	stream)
		out=$(in_ns "c-$1" timeout $((secs + 30)) iperf3 -c "${ip[s-$1]}" -p 5201 -t "$secs" \
			-l 131072 -J 2>/dev/null) || true
		jq -r 'if .error then "NA" else (.end.sum_received.bits_per_second / 1e9 * 1000 | round / 1000) end' \
			<<<"$out" 2>/dev/null || echo NA
		;;
	rr)
		in_ns "c-$1" timeout 120 "$traffic" rr-client tcp "${ip[s-$1]}" 5400 "$rr_count" ||
			echo "NA NA"
		;;
	esac
}

csv=$work/samples.csv
echo "rep,mode,metric,value" >"$csv"
echo "routing: cross-node, pod on node 1 -> pod on node 2; $reps repetitions, ${secs}s streams, $rr_count round trips"
for ((rep = 1; rep <= reps; rep++)); do
	modes="vxlan host-gw"
	((rep % 2)) || modes="host-gw vxlan"
	for mode in $modes; do
		set_mode "$mode"
		gbit=$(measure "$mode" stream)
		read -r p50 p99 <<<"$(measure "$mode" rr)"
		printf '%s,%s,stream,%s\n%s,%s,rr_p50,%s\n%s,%s,rr_p99,%s\n' "$rep" "$mode" "$gbit" \
			"$rep" "$mode" "$p50" "$rep" "$mode" "$p99" >>"$csv"
		printf '  rep %d %-8s stream %8s Gbit/s   TCP_RR p50 %6s us  p99 %6s us\n' "$rep" "$mode" \
			"$gbit" "$p50" "$p99"
	done
done

echo
echo "routing: medians over $reps repetitions (min-max); ratio = vxlan / host-gw. Underlay: veth on a bridge."
printf '%-22s %-24s %-24s %-8s %-10s %s\n' metric vxlan host-gw ratio target "median of per-rep ratios"
for metric in stream rr_p50 rr_p99; do
	awk -F, -v m="$metric" '
		function median(a, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		$3 == m && $4 != "NA" { v[$2, ++n[$2]] = $4; by_rep[$1, $2] = $4 }
		END {
			for (k = 1; k <= 2; k++) {
				mode = k == 1 ? "vxlan" : "host-gw"
				c = 0; lo = ""; hi = ""
				for (i = 1; i <= n[mode]; i++) { x[++c] = v[mode, i]; if (lo == "" || x[c] < lo) lo = x[c]; if (hi == "" || x[c] > hi) hi = x[c] }
				med[mode] = c ? median(x, c) : "NA"; span[mode] = c ? sprintf("%.4g (%.4g-%.4g)", med[mode], lo, hi) : "NA"
			}
			c = 0
			for (key in by_rep) { split(key, p, SUBSEP); if (p[2] == "vxlan" && ((p[1], "host-gw") in by_rep) && by_rep[p[1], "host-gw"] > 0) r[++c] = by_rep[key] / by_rep[p[1], "host-gw"] }
			title = m == "stream" ? "TCP stream Gbit/s" : (m == "rr_p50" ? "TCP_RR p50 us" : "TCP_RR p99 us")
			target = m == "stream" ? ">= 0.85x" : (m == "rr_p50" ? "<= 1.1x" : "-")
			printf "%-22s %-24s %-24s %-8s %-10s %s\n", title, span["vxlan"], span["host-gw"],
				(med["host-gw"] > 0 && med["vxlan"] != "NA") ? sprintf("%.3f", med["vxlan"] / med["host-gw"]) : "NA",
				target, c ? sprintf("%.3f", median(r, c)) : "NA"
		}' "$csv"
done
echo "routing: $(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs; samples:"
cat "$csv"
if grep -q ',NA$' "$csv"; then
	echo "routing: some measurements failed (NA above)" >&2
	exit 1
fi
