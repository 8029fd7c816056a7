#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cross-node pod-to-pod traffic over velod's routingMode vxlan against host-gw, in one run, and
# the bare kernel's own vxlan against routed beside it: the bound velo's ratio is held to.
# Two simulated nodes (network namespaces) on an underlay bridge, velo and velod in each; both
# velods are restarted in the other mode to switch (velod removes the VXLAN devices going to
# host-gw and makes them again going to vxlan). Each mode has its own pod pair, wired as ADD
# wires pods under it: the host-gw pair with the node's MTU (1500), the vxlan pair with velod's
# overhead taken off (1450). Two more nodes on their own bridge carry the bare kernel: no velo,
# no BPF, no nft; pods wired by hand the same way, reached both plainly routed and through a
# VXLAN device pair configured as velod configures velo.vxlan (see "The bare kernel" below).
# Classes: one TCP stream with 128 KiB writes (iperf3, Gbit/s received) and TCP 64 B
# request/response (bench/dp_traffic.c, p50 and p99 in us). Repetitions reverse the order of
# the four paths every other time; medians, min-max and the tunnel/direct ratio of the medians,
# the median (min-max) of the per-repetition ratios, for velo and for the bare kernel, and
# velo's ratio over the kernel's. Targets (issue 41): stream >= 0.85x, TCP_RR p50 <= 1.1x.
#
# THE UNDERLAY IS A VETH PAIR ON A BRIDGE, NOT A NIC: the encapsulation's cost here is the
# kernel's (VXLAN with GSO/GRO over veth); NIC offloads of outer checksums and UDP tunnels are
# not in it.
#
# Everything lives in namespaces velobench-rt-PID-*; velo's state and bpffs under
# /tmp/velobench-rt-XXXXXX; all removed at exit. Traffic only between these namespaces.
#
# Usage (as root): bench/routing.sh [-g] [-o OUTDIR] [-r REPS] [-t SECONDS] [-n RR_COUNT]
#   -g           also both velo modes with velod's source guard (nft table inet velo_guard)
#                deleted after velod starts: what the guard costs each mode (a third pair)
#   -o OUTDIR    routing.md (the table) and routing.csv (samples) there; else both on stdout
#   -r REPS      repetitions ($RT_REPS, 5)
#   -t SECONDS   per stream measurement ($RT_SECS, 3)
#   -n RR_COUNT  round trips per request/response run ($RT_RR, 20000)
#   RT_RR_CPU    CPU both request/response ends share (default the last; empty: unpinned; unpinned,
#                each run lands on one CPU or two and its p50 on one of two levels ~10 us apart)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

reps=${RT_REPS:-5}
secs=${RT_SECS:-3}
rr_count=${RT_RR:-20000}
rr_cpu=${RT_RR_CPU-$(($(nproc) - 1))}
outdir=""
no_guard=false
while getopts "go:r:t:n:h" opt; do
	case $opt in
	g) no_guard=true ;;
	o) outdir=$OPTARG ;;
	r) reps=$OPTARG ;;
	t) secs=$OPTARG ;;
	n) rr_count=$OPTARG ;;
	*) sed -n 's/^# \{0,1\}//; 25,33p' "$0" >&2; exit 2 ;;
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

velods=()
more_pids() { echo "${velods[@]}"; }
# The underlay (bridge), node 1 and node 2 on it, forwarding off at start as on a fresh node.
bench_two_nodes_start velobench-rt vbrt 192.168.79
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

# The bare kernel, the bound velo's ratio is held to: two more nodes on their own bridge, no
# velo, velod, BPF, nft or rp_filter. Their pods are wired by hand as ADD wires them (a /32, a
# link-local gateway, permanent neighbours both ways). Node 1 reaches node 2's pod .2 plainly
# routed (bare-routed, MTU 1500) and its pod .3 through a VXLAN device configured as velod
# configures velo.vxlan (VNI 1, the node's address as local, port 4789, nolearning, a fixed MAC,
# MTU 1450, the node's pod CIDR network address on it, a permanent neighbour and FDB entry for
# the other node, the route onlink; bare-vxlan); and back. Both paths stay up: no restart.
bare=$ns-bk
bench_two_nodes "$bare" vbbk 192.168.80
for n in 1 2; do
	peer=$((3 - n))
	nsenter --net="/run/netns/$bare-n$n" sh -ec "
		sysctl -qw net.ipv4.ip_forward=1
		ip link add vx0 address 02:76:c0:a8:50:0$n mtu 1450 type vxlan id 1 \
			local 192.168.80.$n dstport 4789 nolearning
		ip link set vx0 up
		ip addr add 10.80.$n.0/32 dev vx0
		ip neigh add 10.80.$peer.0 lladdr 02:76:c0:a8:50:0$peer dev vx0 nud permanent
		bridge fdb append 02:76:c0:a8:50:0$peer dev vx0 dst 192.168.80.$peer self permanent
		ip route add 10.80.$peer.2/32 via 192.168.80.$peer dev ul0
		ip route add 10.80.$peer.3/32 via 10.80.$peer.0 dev vx0 onlink"
done

# bare_pod N NAME ADDRESS MTU: a pod on bare node N, wired by hand as ADD would wire it.
bare_pod() {
	local node=$bare-n$1 pod=$ns-$2 host="vbbk${2//[^a-z0-9]/}" mac
	host=${host:0:15}
	ip netns add "$pod"
	ip -n "$pod" link set lo up
	ip link add "$host" netns "$node" address ee:ee:ee:ee:ee:ee mtu "$4" type veth \
		peer name eth0 netns "$pod" mtu "$4"
	mac=$(ip -n "$pod" -br link show eth0 | awk '{ print $3 }')
	ip -n "$pod" link set eth0 up
	ip -n "$pod" addr add "$3/32" dev eth0
	ip -n "$pod" route add 169.254.1.1 dev eth0 scope link
	ip -n "$pod" route add default via 169.254.1.1 dev eth0 onlink
	ip -n "$pod" neigh add 169.254.1.1 lladdr ee:ee:ee:ee:ee:ee dev eth0 nud permanent
	ip -n "$node" link set "$host" up
	ip -n "$node" route add "$3/32" dev "$host" scope link
	ip -n "$node" neigh add "$3" lladdr "$mac" dev "$host" nud permanent
	echo "$3"
}

declare -A ip
set_mode host-gw
# Each mode's pods at the MTU ADD gives them under it.
ip[c-host-gw]=$(bench_two_nodes_pod 1 c-host-gw 10.79 '{"mtu": 1500}')
ip[s-host-gw]=$(bench_two_nodes_pod 2 s-host-gw 10.79 '{"mtu": 1500}')
ip[c-vxlan]=$(bench_two_nodes_pod 1 c-vxlan 10.79 '{"mtu": 1450}')
ip[s-vxlan]=$(bench_two_nodes_pod 2 s-vxlan 10.79 '{"mtu": 1450}')
ip[c-bare-routed]=$(bare_pod 1 c-bare-routed 10.80.1.2 1500)
ip[s-bare-routed]=$(bare_pod 2 s-bare-routed 10.80.2.2 1500)
ip[c-bare-vxlan]=$(bare_pod 1 c-bare-vxlan 10.80.1.3 1450)
ip[s-bare-vxlan]=$(bare_pod 2 s-bare-vxlan 10.80.2.3 1450)
for mode in host-gw vxlan bare-routed bare-vxlan; do
	nsenter --net="/run/netns/$ns-s-$mode" iperf3 -s -p 5201 >/dev/null 2>&1 &
	pids+=("$!")
	nsenter --net="/run/netns/$ns-s-$mode" ${rr_cpu:+taskset -c "$rr_cpu"} "$traffic" rr-server 5400 \
		>/dev/null 2>&1 &
	pids+=("$!")
done
for mode in bare-routed bare-vxlan; do
	in_ns "c-$mode" ping -c 1 -W 2 "${ip[s-$mode]}" >/dev/null || {
		echo "routing: $mode pods don't reach each other" >&2
		exit 1
	}
done
sleep 0.3

# measure MODE stream|rr: Gbit/s, or "p50 p99" in us; NA on failure.
measure() {
	set -- "${1%-no-guard}" "$2" # the same pods
	case $2 in
	stream) bench_iperf_gbit "$ns-c-$1" "${ip[s-$1]}" "$secs" ;;
	rr)
		in_ns "c-$1" timeout 120 ${rr_cpu:+taskset -c "$rr_cpu"} "$traffic" rr-client tcp \
			"${ip[s-$1]}" 5400 "$rr_count" ||
			echo "NA NA"
		;;
	esac
}

csv=$work/samples.csv
echo "rep,mode,metric,value" >"$csv"
echo "routing: cross-node, pod on node 1 -> pod on node 2; $reps repetitions, ${secs}s streams," \
	"$rr_count round trips${rr_cpu:+ on CPU $rr_cpu}; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for ((rep = 1; rep <= reps; rep++)); do
	# Each pair side by side, the order reversed every other repetition.
	modes="vxlan host-gw bare-routed bare-vxlan"
	! $no_guard || modes="vxlan-no-guard host-gw-no-guard $modes"
	((rep % 2)) || modes=$(tr ' ' '\n' <<<"$modes" | tac | paste -sd' ')
	for mode in $modes; do
		[[ $mode == bare-* ]] || set_mode "${mode%-no-guard}"
		if [[ $mode == *-no-guard ]]; then
			# velod applies the guard once, at start.
			for n in n1 n2; do
				in_ns "$n" nft delete table inet velo_guard || {
					echo "routing: -g: $n has no velo_guard table to delete" >&2
					exit 1
				}
			done
		fi
		gbit=$(measure "$mode" stream)
		read -r p50 p99 <<<"$(measure "$mode" rr)"
		printf '%s,%s,stream,%s\n%s,%s,rr_p50,%s\n%s,%s,rr_p99,%s\n' "$rep" "$mode" "$gbit" \
			"$rep" "$mode" "$p50" "$rep" "$mode" "$p99" >>"$csv"
		printf '  rep %d %-16s stream %8s Gbit/s   TCP_RR p50 %6s us  p99 %6s us\n' "$rep" \
			"$mode" "$gbit" "$p50" "$p99"
	done
done

summary() {
	echo "routing: medians over $reps repetitions (min-max); ratio = tunnel / direct, of the"
	echo "medians and the median (min-max) of the per-repetition ratios; extra = tunnel - direct"
	echo "(us), median (min-max) of the per-repetition differences. velo: routingMode vxlan"
	echo "against host-gw; bare: the kernel alone (VXLAN configured as velod does against plain"
	echo "routing). Underlay: veth on a bridge."
	! $no_guard || echo "no-guard: velo's two modes with velod's nft table inet velo_guard deleted."
	printf '%-18s %-5s %-21s %-21s %-6s %-21s %-21s %s\n' metric path vxlan direct ratio \
		"per-rep ratios" "extra" target
	awk -F, -v no_guard="$no_guard" '
		function median(a, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		# span(list, n): "median (min-max)"; sets med.
		function span(a, n,   i, lo, hi) {
			if (!n) { med = "NA"; return "NA" }
			lo = hi = a[1]
			for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
			med = median(a, n)
			return sprintf("%.4g (%.4g-%.4g)", med, lo, hi)
		}
		NR > 1 && $4 != "NA" { v[$3, $2, ++n[$3, $2]] = $4; by_rep[$1, $2, $3] = $4; if ($1 > reps) reps = $1 }
		END {
			split("stream rr_p50 rr_p99", metrics, " ")
			for (k = 1; k <= 3; k++) {
				m = metrics[k]
				title = m == "stream" ? "TCP stream Gbit/s" : (m == "rr_p50" ? "TCP_RR p50 us" : "TCP_RR p99 us")
				target = m == "stream" ? ">= 0.85x" : (m == "rr_p50" ? "<= 1.1x" : "-")
				for (p = 1; p <= (no_guard == "true" ? 3 : 2); p++) {
					tun = p == 1 ? "vxlan" : (p == 2 ? "bare-vxlan" : "vxlan-no-guard")
					dir = p == 1 ? "host-gw" : (p == 2 ? "bare-routed" : "host-gw-no-guard")
					c = 0; for (i = 1; i <= n[m, tun]; i++) x[++c] = v[m, tun, i]
					s_tun = span(x, c); m_tun = med
					c = 0; for (i = 1; i <= n[m, dir]; i++) x[++c] = v[m, dir, i]
					s_dir = span(x, c); m_dir = med
					c = 0
					for (r = 1; r <= reps; r++)
						if (((r, tun, m) in by_rep) && ((r, dir, m) in by_rep) && by_rep[r, dir, m] > 0)
							x[++c] = by_rep[r, tun, m] / by_rep[r, dir, m]
					s_rat = span(x, c)
					c = 0
					for (r = 1; r <= reps; r++)
						if (((r, tun, m) in by_rep) && ((r, dir, m) in by_rep))
							x[++c] = by_rep[r, tun, m] - by_rep[r, dir, m]
					s_ext = m != "rr_p50" ? "-" : span(x, c)
					extra[p] = med
					ratio[p] = (m_dir > 0 && m_tun != "NA") ? m_tun / m_dir : "NA"
					printf "%-18s %-5s %-21s %-21s %-6s %-21s %-21s %s\n", p == 1 ? title : "",
						p == 1 ? "velo" : (p == 2 ? "bare" : "no-g"), s_tun, s_dir,
						ratio[p] == "NA" ? "NA" : sprintf("%.3f", ratio[p]), s_rat, s_ext,
						p == 1 ? target : (p == 2 ? "(bound)" : "")
				}
				for (p = 1; p <= (no_guard == "true" ? 3 : 1); p += 2) {
					who = p == 1 ? "velo" : "no-g"
					printf "%-18s %s ratio / bare ratio %s", "", who,
						(ratio[p] != "NA" && ratio[2] != "NA" && ratio[2] > 0) ? sprintf("%.3f", ratio[p] / ratio[2]) : "NA"
					if (m == "rr_p50" && extra[p] != "NA" && extra[2] != "NA")
						printf "; %s extra - bare extra %.3g us", who, extra[p] - extra[2]
					printf "\n"
				}
			}
		}' "$csv"
	echo "routing: $(date -u '+%Y-%m-%d %H:%M UTC'), velo $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)," \
		"kernel $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

echo
if [ -n "$outdir" ]; then
	mkdir -p "$outdir"
	summary | tee "$outdir/routing.md"
	cp "$csv" "$outdir/routing.csv"
	echo "routing: results in $outdir/routing.md, samples in $outdir/routing.csv"
else
	summary
	echo "routing: samples:"
	cat "$csv"
fi
if grep -q ',NA$' "$csv"; then
	echo "routing: some measurements failed (NA above)" >&2
	exit 1
fi
