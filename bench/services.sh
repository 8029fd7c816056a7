#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pod -> ClusterIP -> pod on one node, four paths side by side in one run:
#   kp        kube-proxy-style nftables DNAT in the node (prerouting dstnat) on velo's routed
#             path; the client pod doesn't opt in to velo.dev/services
#   svc       velo's connect-time translation (velo.dev/services), routed path
#   svc-sm    velo's translation with the socket short-circuit (velo.dev/sockmap on both pods)
#   direct    the client dials the server pod's IP on velo's routed path: no NAT at all, the
#             bound of what any translation can give on the routed path
#   direct-sm the client dials the server pod's IP, both pods velo.dev/sockmap
# Every velo pod's conflist accepts the sockhash kernel bugs velo probes for
# (sockmapAcceptKernelBugs), as the demo does: on a kernel where a probe fails the sockmap pods
# would otherwise stay routed. Measured, as bench/sockmap.sh does:
#   stream  tests/node/sockmap/sockmap_stream blast/sink: SIZE-byte writes for SECONDS, Gbit/s
#   rr      bench/sm_rr: 64-byte ping-pong, p50 and p99 in us, both ends on CPU 0 and on 0/1
#   conn    bench/sm_rr: connect, 64 B each way, close, in a loop; connections/s, same pinnings
# Repetitions alternate the path order; medians with min-max spread; ratios against issue 17's
# targets. Then one conn run per velo path under BPF_ENABLE_STATS (bench/dp_stats.c, outside the
# timed runs): the connect program's ns per connect (run_time_ns / run_cnt).
#
# Topology: a node netns velotest-svcbench-node-PID (velo and velod run in it, kube-proxy's
# rules are its nftables table velotest_kp), two pod netns per path, one bpffs dir
# /sys/fs/bpf/velotest-svcbench-PID, velo's state under /tmp/velotest-svcbench-XXXXXX, cgroups
# velotest-svcbench-PID-* under the cgroup2 mount. Traffic only between these namespaces.
# Everything is removed at exit, pass or fail.
#
# Usage (as root): bench/services.sh [-o OUTDIR] [-r REPS] [-t SECONDS] [-s SIZE]
#   -o OUTDIR   services.md, services.csv, services_samples.csv, services_stats.csv
#               (default build/bench)
#   -r REPS     alternating repetitions (5)
#   -t SECONDS  per measurement (1)
#   -s SIZE     stream write size in bytes (65536)
# Needs: make (build/velo, build/velod, build/veloctl), make build/tests/sockmap_stream
# build/bench/sm_rr (`make bench` builds both), containernetworking-plugins (host-local), jq,
# nft, bpftool, libbpf-dev.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
outdir=$top/build/bench reps=5 secs=1 size=65536
while getopts "o:r:t:s:h" opt; do
	case "$opt" in
	o) outdir=$OPTARG ;;
	r) reps=$OPTARG ;;
	t) secs=$OPTARG ;;
	s) size=$OPTARG ;;
	*) sed -n 's/^# \{0,1\}//; 25,30p' "$0" >&2; exit 2 ;;
	esac
done
# shellcheck source=bench/lib.bash
source "$top/bench/lib.bash"
bench_pod_checks bench/services.sh "$size"
velo=${VELO:-$top/build/velo}
velod=${VELOD:-$top/build/velod}
veloctl=${VELOCTL:-$top/build/veloctl}
stream=$top/build/tests/sockmap_stream
sm_rr=$top/build/bench/sm_rr
bench_need bench/services.sh "$velo" "$velod" "$veloctl" "$stream" "$sm_rr" /usr/lib/cni/host-local \
	-- jq nft bpftool taskset
mkdir -p "$outdir"
bench_start bench/services.sh velotest-svcbench
mkdir -p "$work/run"
cp "$velo" "$work/bin/velo"
cp /usr/lib/cni/host-local "$work/bin/"
innode() { nsenter --net="/run/netns/$node" "$@"; }

paths="kp svc svc-sm direct direct-sm"
label() {
	case $1 in
	kp) echo "kube-proxy DNAT" ;; svc) echo "velo svc routed" ;; svc-sm) echo "velo svc + sockmap" ;;
	direct) echo "pod IP routed" ;; direct-sm) echo "pod IP + sockmap" ;;
	esac
}
# Each path's ClusterIP (the direct paths have none); ports 80 stream, 81 rr, 82 conn.
declare -A vip=([kp]=10.96.7.1 [svc]=10.96.7.2 [svc-sm]=10.96.7.3)
bugs='["halfclose-eagain", "splice-ingress", "waitall-short", "rcvlowat-ignored"]'

# config CGROUP_REL ANNOTATIONS_JSON: the network config of one pod.
config() {
	jq -cn --arg w "$work" --arg b "$bpffs" --arg cg "$1" --argjson a "$2" --argjson bugs "$bugs" '{
		cniVersion: "1.0.0", name: "velotest-svcbench", type: "velo", vethPrefix: "vs", mtu: 1500,
		stateDir: ($w + "/state"), runDir: ($w + "/run"), bpffsDir: $b,
		logFile: ($w + "/cni.log"), sockmapAcceptKernelBugs: $bugs,
		ipam: {type: "host-local", dataDir: ($w + "/ipam"), ranges: [[{subnet: "10.246.0.0/24"}]]},
		runtimeConfig: {"io.kubernetes.cri.pod-annotations": $a, cgroupPath: $cg}}'
}
annotations() {
	local sm=false svc=false
	case $1 in svc-sm | direct-sm) sm=true ;; esac
	case $1-$2 in svc-c | svc-sm-c) svc=true ;; esac
	jq -cn --arg sm "$sm" --arg svc "$svc" '{"velo.dev/sockmap": $sm, "velo.dev/services": $svc}'
}

declare -A pod_ns pod_cg pod_ip server_pid
# add_pod PATH ROLE: a pod netns and cgroup wired by velo.
add_pod() {
	local path=$1 key=$1-$2 ns rel out
	ns=velotest-svcbench-$key-$tag
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	rel=/velotest-svcbench-$tag-$key
	mkdir "$cgmount$rel"
	pod_cg[$key]=$cgmount$rel
	out=$(config "$rel" "$(annotations "$path" "$2")" | innode env -i PATH="$PATH" CNI_COMMAND=ADD \
		CNI_CONTAINERID="svcbench-$key" CNI_NETNS="/run/netns/$ns" CNI_IFNAME=eth0 \
		CNI_PATH="$work/bin" "$work/bin/velo") ||
		{ echo "bench/services.sh: $path ADD failed: $out" >&2; exit 1; }
	pod_ns[$key]=$ns
	pod_ip[$key]=$(jq -r '.ips[0].address | split("/")[0]' <<<"$out")
}
# target PATH PORT_INDEX: what that path's client dials (0 stream, 1 rr, 2 conn).
target() {
	if [ "$1" = direct ] || [ "$1" = direct-sm ]; then
		echo "${pod_ip[$1-s]} $((5100 + 100 * $2))"
	else
		echo "${vip[$1]} $((80 + $2))"
	fi
}
endpoint() { local a p; read -r a p <<<"$(target "$@")"; echo "$a:$p"; }

echo "bench/services.sh: wiring pods ($(date +%H:%M:%S))"
for path in $paths; do
	add_pod "$path" s
	add_pod "$path" c
	innode true
	start_pod_servers "$path"
done

# kube-proxy's ClusterIP rules for the kp path: DNAT where the pod's first packet meets the node.
innode nft -f - <<NFT
table ip velotest_kp {
	chain svc {
		type nat hook prerouting priority dstnat; policy accept;
		ip daddr ${vip[kp]} tcp dport 80 counter dnat to ${pod_ip[kp-s]}:5100
		ip daddr ${vip[kp]} tcp dport 81 counter dnat to ${pod_ip[kp-s]}:5200
		ip daddr ${vip[kp]} tcp dport 82 counter dnat to ${pod_ip[kp-s]}:5300
	}
}
NFT

# velod keeps the Services of the two velo paths in the maps, from its services file.
jq -cn --arg a "${pod_ip[svc-s]}" --arg b "${pod_ip[svc-sm-s]}" \
	--arg va "${vip[svc]}" --arg vb "${vip[svc-sm]}" '
	def svc($n; $ip): {metadata: {name: $n, namespace: "svcbench"},
		spec: {clusterIP: $ip, clusterIPs: [$ip], ports: [
			{name: "stream", protocol: "TCP", port: 80}, {name: "rr", protocol: "TCP", port: 81},
			{name: "conn", protocol: "TCP", port: 82}]}};
	def slice($n; $ip): {metadata: {name: $n, namespace: "svcbench",
		labels: {"kubernetes.io/service-name": $n}}, addressType: "IPv4",
		ports: [{name: "stream", port: 5100}, {name: "rr", port: 5200}, {name: "conn", port: 5300}],
		endpoints: [{addresses: [$ip], conditions: {ready: true}, nodeName: "bench"}]};
	{services: [svc("svc"; $va), svc("svc-sm"; $vb)],
	 endpointSlices: [slice("svc"; $a), slice("svc-sm"; $b)]}' >"$work/services.json"
velod_port=$((20000 + RANDOM % 20000))
jq -n --arg w "$work" --arg b "$bpffs" --arg l "127.0.0.1:$velod_port" '{
	stateDir: ($w + "/state"), runDir: ($w + "/run"), bpffsDir: $b, listen: $l,
	reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, reapIntervalMs: 0,
	sourceGuardPrefix: "", servicesFile: ($w + "/services.json"), servicesSyncMs: 1000,
	nodeName: "bench"}' >"$work/velod.json"
# nsenter execs velod: $! is velod itself (a function in the background would be a subshell
# whose velod outlived the cleanup, and held the node lock).
nsenter --net="/run/netns/$node" "$velod" --config "$work/velod.json" 2>>"$work/velod.log" &
pids+=("$!")
for _try in $(seq 100); do
	grep -qs 'services: .* service ports' "$work/velod.log" && break
	sleep 0.05
done
grep -qs 'services: .* service ports' "$work/velod.log" ||
	{ echo "bench/services.sh: velod did not sync the services: $(tail -n 3 "$work/velod.log")" >&2; exit 1; }
for path in $paths; do
	pod_argv "$path" c
	"${POD_ARGV[@]}" timeout 5 "$sm_rr" conn-client "$(endpoint "$path" 2)" 0.2 >/dev/null 2>>"$work/clients.log" ||
		{ echo "bench/services.sh: $path: the client cannot reach $(endpoint "$path" 2)" >&2; exit 1; }
done

cpus() { if [ "$1" = same ]; then echo "0 0"; else echo "0 1"; fi; }
# measure CLASS VARIANT PATH [PREFIX...]: the value(s) of one run; PREFIX wraps the client.
measure() {
	local class=$1 variant=$2 path=$3 ccpu scpu addr port
	shift 3
	pod_argv "$path" c
	# A client stuck on a lost handshake or a sockhash kernel bug fails its run, not the bench.
	POD_ARGV=(timeout "$(awk -v s="$secs" 'BEGIN { printf "%d", s * 3 + 10 }')" "${POD_ARGV[@]}")
	case $class in
	stream)
		read -r addr port <<<"$(target "$path" 0)"
		"$@" "${POD_ARGV[@]}" "$stream" blast "$addr" "$port" "$size" "$secs" 2>>"$work/clients.log" || echo NA
		;;
	rr | conn)
		read -r ccpu scpu <<<"$(cpus "$variant")"
		taskset -a -p -c "$scpu" "${server_pid[$path-$class]}" >/dev/null
		"$@" "${POD_ARGV[@]}" taskset -c "$ccpu" "$sm_rr" "$class-client" \
			"$(endpoint "$path" "$([ "$class" = rr ] && echo 1 || echo 2)")" "$secs" \
			2>>"$work/clients.log" || { [ "$class" = rr ] && echo "NA NA" || echo NA; }
		;;
	esac
}

csv=$work/samples.csv
echo "class,variant,path,rep,metric,value" >"$csv"
echo "bench/services.sh: $reps repetitions of ${secs}s, about" \
	"$(awk -v r="$reps" -v s="$secs" -v p="$(wc -w <<<"$placements")" \
		'BEGIN { printf "%.0f", (1 + 2 * p) * 4 * r * (s + 0.05) + 4 * s + 5 }')s"
for rep in $(seq "$reps"); do
	for path in $(order "$rep"); do
		echo "stream,bulk,$path,$rep,gbit,$(measure stream bulk "$path")" >>"$csv"
	done
done
echo "bench/services.sh: streams done ($(date +%H:%M:%S))"
measure_rr_conn bench/services.sh

# Which paths went where: the ClusterIP counters of velo's translation and kube-proxy's rules.
svc_json=$(innode "$veloctl" --bpffs "$bpffs" --run-dir "$work/run" --state-dir "$work/state" \
	--agent "" -j services)
translations() {
	jq --arg v "$1" '[.servicePorts[] | select(.clusterIP == $v) | .translations] | add // 0' <<<"$svc_json"
}
kp_packets=$(innode nft -j list table ip velotest_kp |
	jq '[.nftables[].rule? // empty | .expr[] | .counter? // empty | .packets] | add // 0')
sm_redirects=$(innode "$veloctl" --bpffs "$bpffs" --run-dir "$work/run" --state-dir "$work/state" \
	--agent "" -j sockets | jq '.counters.redirect // 0')

# The programs' cost: one conn run (same CPU) per velo path with run-time stats held.
ids=$(find "$bpffs" -type f 2>/dev/null | while read -r pin; do
	bpftool prog show pinned "$pin" -j 2>/dev/null | jq -r '.id // empty' || true
	bpftool link show pinned "$pin" -j 2>/dev/null | jq -r '.prog_id // empty' || true
done | sort -un | paste -sd, -) || true
stats_csv=$work/stats.csv
echo "path,class,id,program,run_cnt,run_time_ns,ns_per_run,connections" >"$stats_csv"
for path in svc svc-sm kp; do
	cps=$(measure conn same "$path" "$dp_stats" -o "$work/prog.csv" -i "${ids:-0}" --)
	awk -F, -v p="$path" -v n="$(awk -v c="$cps" -v s="$secs" 'BEGIN { printf "%.0f", c * s }')" \
		'{ printf "%s,conn,%s,%s,%s,%s,%.1f,%s\n", p, $1, $2, $3, $4, $4 / $3, n }' \
		"$work/prog.csv" >>"$stats_csv"
done
echo "bench/services.sh: program cost runs done ($(date +%H:%M:%S))"

# ---------------------------------------------------------------- report
csv_out=$outdir/services.csv md=$outdir/services.md
cp "$csv" "$outdir/services_samples.csv"
cp "$stats_csv" "$outdir/services_stats.csv"
bench_met=met bench_not_met="NOT MET"
declare -A med
echo "class,variant,path,metric,median,min,max" >"$csv_out"
# target_row TEXT A B OP LIMIT: a ratio of medians against a target.
target_row() {
	local raw
	raw=$(ratio_raw "$2" "$3")
	echo "| $1 | $(ratio "$2" "$3") | $4 $5 | $(met "$raw" "$4" "$5") |"
}

{
	echo "# Services: pod -> ClusterIP -> pod on one node"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs, load average" \
		"$(cut -d' ' -f1-3 /proc/loadavg) at the end."
	echo "$reps repetitions of ${secs}s per measurement, path order alternating; cells: median (min-max)."
	echo "Command (as root): \`bench/services.sh -r $reps -t $secs$([ "$size" = 65536 ] || echo " -s $size")\`"
	echo "Paths: kube-proxy DNAT (nftables prerouting dstnat in the node, velo routed pods), velo svc"
	echo "routed (velo.dev/services), velo svc + sockmap (and velo.dev/sockmap on both pods), pod IP +"
	echo "sockmap (no Service), pod IP routed (no Service, no NAT). Every pod's conflist accepts the probed sockhash kernel bugs"
	echo "(sockmapAcceptKernelBugs: halfclose-eagain splice-ingress waitall-short rcvlowat-ignored)."
	echo
	echo "## Bulk stream, $size-byte writes, Gbit/s"
	echo
	echo "| path | Gbit/s |"
	echo "|---|---:|"
	for path in $paths; do
		cell stream bulk "$path" gbit
		echo "| $(label "$path") | $CELL |"
	done
	echo
	rr_conn_tables "## Request/response, 64 B ping-pong, us"
	echo
	echo "## Against issue 17's targets (through a ClusterIP: velo svc + sockmap; ratios of medians)"
	echo
	echo "| ratio | value | target | verdict |"
	echo "|---|---:|---|---|"
	target_row "bulk svc+sockmap / pod IP + sockmap" "${med[stream,bulk,svc-sm,gbit]}" \
		"${med[stream,bulk,direct-sm,gbit]}" ">=" 0.95
	target_row "bulk svc+sockmap / kube-proxy DNAT" "${med[stream,bulk,svc-sm,gbit]}" \
		"${med[stream,bulk,kp,gbit]}" ">=" 2.5
	for placement in $placements; do
		target_row "RR p50 svc+sockmap / kube-proxy DNAT, $(placement_title "$placement")" \
			"${med[rr,$placement,svc-sm,p50]}" "${med[rr,$placement,kp,p50]}" "<=" 0.5
	done
	for placement in $placements; do
		target_row "connections/s svc+sockmap / kube-proxy DNAT, $(placement_title "$placement")" \
			"${med[conn,$placement,svc-sm,cps]}" "${med[conn,$placement,kp,cps]}" ">=" 1.1
		target_row "connections/s svc routed / kube-proxy DNAT, $(placement_title "$placement")" \
			"${med[conn,$placement,svc,cps]}" "${med[conn,$placement,kp,cps]}" ">=" 1.1
	done
	echo
	echo "Bounds on this kernel: what the same path without any Service gives (pod IP), against"
	echo "kube-proxy DNAT. A ClusterIP path can't beat its pod IP twin: translation happens once, at"
	echo "connect, and the connection is then a pod IP connection."
	echo
	echo "| bound | value | target it bounds |"
	echo "|---|---:|---|"
	echo "| bulk pod IP + sockmap / kube-proxy DNAT | $(ratio "${med[stream,bulk,direct-sm,gbit]}" "${med[stream,bulk,kp,gbit]}") | bulk >= 2.5 |"
	for placement in $placements; do
		echo "| RR p50 pod IP + sockmap / kube-proxy DNAT, $(placement_title "$placement") |" \
			"$(ratio "${med[rr,$placement,direct-sm,p50]}" "${med[rr,$placement,kp,p50]}") | RR p50 <= 0.5 |"
	done
	for placement in $placements; do
		echo "| connections/s pod IP routed (no NAT) / kube-proxy DNAT, $(placement_title "$placement") |" \
			"$(ratio "${med[conn,$placement,direct,cps]}" "${med[conn,$placement,kp,cps]}") | connections/s >= 1.1 |"
		echo "| connections/s pod IP + sockmap / kube-proxy DNAT, $(placement_title "$placement") |" \
			"$(ratio "${med[conn,$placement,direct-sm,cps]}" "${med[conn,$placement,kp,cps]}") | connections/s >= 1.1 |"
	done
	echo
	echo "Other ratios: bulk svc routed / kube-proxy DNAT" \
		"$(ratio "${med[stream,bulk,svc,gbit]}" "${med[stream,bulk,kp,gbit]}"), RR p50 svc routed /" \
		"kube-proxy DNAT (same CPU) $(ratio "${med[rr,same,svc,p50]}" "${med[rr,same,kp,p50]}")."
	echo
	echo "## Cost of velo's programs per connect (BPF_ENABLE_STATS, one ${secs}s conn run, same CPU)"
	echo
	echo "ns/run = run_time_ns / run_cnt, including the ~75 ns the stats cost; every velo program"
	echo "pinned under the bench's bpffs dir that ran (both pods)."
	echo
	echo "| path | program | runs | ns/run | runs per connection |"
	echo "|---|---|---:|---:|---:|"
	tail -n +2 "$stats_csv" | while IFS=, read -r p _ _ prog cnt _ nsr conns; do
		echo "| $(label "$p") | $prog | $cnt | $nsr | $(ratio "$cnt" "$conns") |"
	done
	echo
	echo "## Sanity"
	echo
	echo "Translations counted by velo (veloctl services): svc routed $(translations "${vip[svc]}")," \
		"svc + sockmap $(translations "${vip[svc-sm]}"). Packets kube-proxy's DNAT rules counted" \
		"(the nat hook sees the first of each kp-path connection): $kp_packets. sk_msg redirects (sockmap paths): $sm_redirects."
	echo "Failed measurements (NA): $(grep -c ',NA$' "$csv" || true)."
	[ "$(translations "${vip[svc-sm]}")" -gt 0 ] || echo "WARNING: the svc + sockmap path was never translated."
	[ "$sm_redirects" -gt 0 ] || echo "WARNING: no sk_msg redirect: the sockmap paths stayed routed."
} >"$md"

bench_results bench/services.sh "$md" "$md, $csv_out, $outdir/services_samples.csv, $outdir/services_stats.csv" "$outdir/services_samples.csv"
