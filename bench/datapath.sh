#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Pod-to-pod datapath on one node, every path in one run: the reference ptp and bridge plugins,
# velo routed (velo.dev/fastpath "off"), velo tc ("tc"), velo XDP ("xdp") and velo sockmap
# (velo.dev/sockmap "true", fastpath "off"); opt-in: velo routed with the pods' eth0 set as XDP
# sets them (routed-txoff: TX checksum offload off, GRO on). Classes: TCP stream with 64 B (Nagle and
# TCP_NODELAY), 1 KiB and 128 KiB writes (iperf3, Gbit/s received); UDP 64 B and 1400 B packet
# rate received (bench/dp_traffic.c, kpps); TCP and UDP 64-byte request/response latency (p50,
# p99, us; client and server pinned to one CPU). Repetitions alternate the paths (rotated order)
# class by class; medians with min-max spread and ratios against ptp. Then one run per class
# and velo fast path under BPF_ENABLE_STATS (bench/dp_stats.c) for velo's programs' ns/run.
#
# Topology: a node netns velobench-dp-PID (forwarding off at start, as on a fresh node), two
# pod netns per path (server s, client c), the plugins run inside the node with nsenter; velo's
# state, bpffs, log and every IPAM dataDir under /tmp/velobench-dp-XXXXXX; sockmap pods get
# cgroups velobench-dp-PID-* under the cgroup2 mount, passed as runtimeConfig cgroupPath, and
# the traffic processes are moved into them. Traffic only between these namespaces. Everything
# is removed at exit, pass or fail.
#
# Usage (as root): bench/datapath.sh [-o OUTDIR] [-r REPS] [-t SECONDS] [-n RR_COUNT] [-p "PATHS"]
#        [-c "CLASSES"] [-m MTU]
#   -o OUTDIR    datapath.md, datapath.csv, datapath_stats.csv, datapath.png (build/bench)
#   -r REPS      alternating repetitions ($DP_REPS, 5)
#   -t SECONDS   per stream/UDP measurement ($DP_SECS, 2)
#   -n RR_COUNT  round trips per latency measurement ($DP_RR_COUNT, 20000)
#   -p PATHS     subset of "ptp bridge routed tc xdp sockmap", or routed-txoff (ptp is always
#                measured)
#   -c CLASSES   subset of "tcp64 tcp64nd tcp1k tcp128k udp64 udp1400 rrtcp rrudp" ($DP_CLASSES)
#   -m MTU       every pod's MTU ($DP_MTU, 1500)
#   DP_CPUS      "SENDER RECEIVER" CPUs for streams and UDP (default: unpinned)
#   DP_RR_CPU    CPU for both latency ends (default: the last CPU; empty: unpinned)
#   DOCS=1       also copy the plot to docs/benchmarks-datapath.png
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

outdir=$top/build/bench
reps=${DP_REPS:-5}
secs=${DP_SECS:-2}
rr_count=${DP_RR_COUNT:-20000}
all_paths="ptp bridge routed routed-txoff tc xdp sockmap"
paths="ptp bridge routed tc xdp sockmap"
all_classes="tcp64 tcp64nd tcp1k tcp128k udp64 udp1400 rrtcp rrudp"
want_classes=${DP_CLASSES:-$all_classes}
mtu=${DP_MTU:-1500}
while getopts "o:r:t:n:p:c:m:h" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	r) reps=$OPTARG ;;
	t) secs=$OPTARG ;;
	n) rr_count=$OPTARG ;;
	p) paths=$OPTARG ;;
	c) want_classes=$OPTARG ;;
	m) mtu=$OPTARG ;;
	*) sed -n 's/^# \{0,1\}//; 20,31p' "$0" >&2; exit 2 ;;
	esac
done
for value in "$reps" "$secs" "$rr_count" "$mtu"; do
	[[ $value =~ ^[1-9][0-9]*$ ]] || { echo "datapath: counts must be positive integers" >&2; exit 2; }
done
# ptp first: the reference every ratio is against.
paths="ptp $(tr ' ' '\n' <<<"$paths" | grep -vx 'ptp' | grep -v '^$' | tr '\n' ' ')"
for path in $paths; do
	[[ " $all_paths " == *" $path "* ]] || { echo "datapath: unknown path $path" >&2; exit 2; }
done
for class in $want_classes; do
	[[ " $all_classes " == *" $class "* ]] || { echo "datapath: unknown class $class" >&2; exit 2; }
done
rr_cpu=${DP_RR_CPU-$(($(nproc) - 1))}
default_cpus=""
read -r tx_cpu rx_cpu <<<"${DP_CPUS-$default_cpus}"

[ "$(id -u)" = 0 ] || { echo "datapath: needs root (network namespaces, BPF)" >&2; exit 1; }
ref_dir=/usr/lib/cni
velo=${VELO:-$top/build/velo}
# shellcheck source=bench/lib.bash
source "$top/bench/lib.bash"
bench_need datapath "$ref_dir/ptp" "$ref_dir/bridge" "$ref_dir/host-local" "$velo" -- iperf3 jq gnuplot
cgmount=$(bench_cgroup2_mount)
[ -n "$cgmount" ] || { echo "datapath: no cgroup2 mount" >&2; exit 1; }
bench_node_start datapath velobench-dp

traffic=$work/dp_traffic
dp_stats=$work/dp_stats
bench_cc "$traffic" "$top/bench/dp_traffic.c"
# shellcheck disable=SC2046
bench_cc "$dp_stats" "$top/bench/dp_stats.c" $(pkg-config --libs libbpf)

ipam() { # ipam NAME SUBNET
	jq -cn --arg d "$work/ipam/$1" --arg s "$2" '{type: "host-local", dataDir: $d, ranges: [[{subnet: $s}]]}'
}
# config PATH CGROUP_REL: the network config of that path's pods (same MTU for all).
config() {
	local ann
	case $1 in
	ptp)
		jq -cn --argjson i "$(ipam ptp 10.249.1.0/24)" \
			--argjson mtu "$mtu" '{cniVersion: "1.0.0", name: "velobench-ptp", type: "ptp", ipMasq: false,
			 mtu: $mtu, ipam: $i}'
		return ;;
	bridge)
		jq -cn --argjson i "$(ipam bridge 10.249.2.0/24)" --argjson mtu "$mtu" \
			'{cniVersion: "1.0.0", name: "velobench-bridge", type: "bridge", bridge: "vbdp0",
			 isGateway: true, ipMasq: false, mtu: $mtu, ipam: $i}'
		return ;;
	routed | routed-txoff) ann='{"velo.dev/fastpath": "off"}' ;;
	tc) ann='{"velo.dev/fastpath": "tc"}' ;;
	xdp) ann='{"velo.dev/fastpath": "xdp"}' ;;
	sockmap) ann='{"velo.dev/fastpath": "off", "velo.dev/sockmap": "true"}' ;;
	esac
	jq -cn --arg w "$work" --argjson i "$(ipam velo 10.249.3.0/24)" --argjson a "$ann" --arg cg "$2" \
		--argjson bugs "$BENCH_ACCEPT_BUGS" --argjson mtu "$mtu" '{
		cniVersion: "1.0.0", name: "velobench-velo", type: "velo", vethPrefix: "vb", mtu: $mtu,
		stateDir: ($w + "/state"), runDir: ($w + "/run"), bpffsDir: ($w + "/bpf/velo"),
		logFile: ($w + "/cni.log"), ipam: $i, sockmapAcceptKernelBugs: $bugs,
		runtimeConfig: ({"io.kubernetes.cri.pod-annotations": $a}
			+ (if $cg == "" then {} else {cgroupPath: $cg} end))}'
}
plugin_of() { case $1 in ptp | bridge) echo "$ref_dir/$1" ;; *) echo "$velo" ;; esac; }

declare -A pod_ns pod_cg pod_ip
# add_pod PATH ROLE: a pod namespace (and for sockmap a cgroup) wired by that path's plugin.
add_pod() {
	local key=$1-$2 ns=velobench-dp-$tag-$1-$2 rel="" out
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	if [ "$1" = sockmap ]; then
		rel=/velobench-dp-$tag-$key
		mkdir "$cgmount$rel"
		pod_cg[$key]=$cgmount$rel
	fi
	out=$(config "$1" "$rel" | in_node env -i PATH="$PATH" CNI_COMMAND=ADD \
		CNI_CONTAINERID="velobench-dp-$key" CNI_NETNS="/run/netns/$ns" CNI_IFNAME=eth0 \
		CNI_PATH="$ref_dir" "$(plugin_of "$1")") || { echo "datapath: $1 ADD failed: $out" >&2; exit 1; }
	pod_ns[$key]=$ns
	pod_ip[$key]=$(jq -r '.ips[0].address | split("/")[0]' <<<"$out")
	# What velo does to an XDP pod's eth0 (docs/fastpath.md), on the routed path: its bound.
	if [ "$1" = routed-txoff ]; then
		nsenter --net="/run/netns/$ns" ethtool -K eth0 tx off gro on >/dev/null ||
			{ echo "datapath: ethtool on $ns failed" >&2; exit 1; }
	fi
}
# pod_argv PATH ROLE: POD_ARGV = the command prefix that runs in that pod (and its cgroup).
pod_argv() {
	# shellcheck disable=SC2016
	POD_ARGV=(nsenter --net="/run/netns/${pod_ns[$1-$2]}" sh -c \
		'[ -z "$1" ] || echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "${pod_cg[$1-$2]:-}")
}
in_pod() {
	pod_argv "$1" "$2"
	shift 2
	"${POD_ARGV[@]}" "$@"
}
# pinned rr|tx|rx: the taskset prefix for that end (nothing when unpinned).
pinned() {
	local cpu
	case $1 in rr) cpu=$rr_cpu ;; tx) cpu=${tx_cpu:-} ;; rx) cpu=${rx_cpu:-} ;; esac
	[ -n "$cpu" ] && echo "taskset -c $cpu"
	return 0
}

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "datapath: paths: $paths; $reps repetitions, ${secs}s per stream, $rr_count round trips, MTU $mtu (load $load_start)"
for path in $paths; do
	add_pod "$path" s
	add_pod "$path" c
	# Started without a subshell, so that $! is the server itself.
	pod_argv "$path" s
	# shellcheck disable=SC2046
	"${POD_ARGV[@]}" $(pinned rx) iperf3 -s -p 5201 >/dev/null 2>&1 &
	pids+=("$!")
	# shellcheck disable=SC2046
	"${POD_ARGV[@]}" $(pinned rr) "$traffic" rr-server 5400 >/dev/null 2>&1 &
	pids+=("$!")
done
# Every pod reaches its peer before anything is timed.
sleep 0.5
for path in $paths; do
	in_pod "$path" c ping -c 1 -W 2 "${pod_ip[$path-s]}" >/dev/null ||
		{ echo "datapath: $path: client cannot reach server" >&2; exit 1; }
done

# name|kind|size|unit|title
classes=(
	"tcp64|tcp|64|Gbit/s|TCP stream, 64 B writes"
	"tcp64nd|tcpnd|64|Gbit/s|TCP stream, 64 B writes, TCP_NODELAY"
	"tcp1k|tcp|1024|Gbit/s|TCP stream, 1 KiB writes"
	"tcp128k|tcp|131072|Gbit/s|TCP stream, 128 KiB writes"
	"udp64|udp|64|kpps|UDP 64 B, packets received"
	"udp1400|udp|1400|kpps|UDP 1400 B, packets received"
	"rrtcp|rrtcp|64|us|TCP 64 B request/response"
	"rrudp|rrudp|64|us|UDP 64 B request/response"
)
selected=()
for entry in "${classes[@]}"; do
	[[ " $want_classes " == *" ${entry%%|*} "* ]] && selected+=("$entry")
done
classes=("${selected[@]}")

# udp_rcvbuf_errors PATH: datagrams the server pod's UDP sockets dropped for a full buffer.
udp_rcvbuf_errors() {
	# shellcheck disable=SC2016
	in_pod "$1" s awk '/^Udp:/ && !h { for (i = 2; i <= NF; i++) if ($i == "RcvbufErrors") f = i; h = 1; next }
		/^Udp:/ { print $f }' /proc/net/snmp
}

# measure PATH KIND SIZE [PREFIX...]: prints the value(s) of one measurement ("NA" on failure).
# PREFIX (dp_stats) wraps the client side only.
measure() {
	local path=$1 kind=$2 size=$3 sip out
	shift 3
	sip=${pod_ip[$path-s]}
	pod_argv "$path" c
	case $kind in
	tcp | tcpnd)
		# shellcheck disable=SC2046
		out=$("$@" "${POD_ARGV[@]}" $(pinned tx) timeout $((secs + 30)) iperf3 -c "$sip" -p 5201 -t "$secs" \
			-l "$size" $([ "$kind" = tcpnd ] && echo -N) -J 2>/dev/null) || true
		[ -n "$out" ] || { echo NA; return; }
		jq -r 'if .error then "NA" else (.end.sum_received.bits_per_second / 1e9 * 1000 | round / 1000) end' \
			<<<"$out" 2>/dev/null || echo NA
		;;
	udp)
		local sink=$work/sink.out i
		local spid drops0 drops1 received
		drops0=$(udp_rcvbuf_errors "$path")
		pod_argv "$path" s
		# shellcheck disable=SC2046
		"${POD_ARGV[@]}" $(pinned rx) timeout $((secs + 40)) "$traffic" udp-sink 5300 >"$sink" 2>&1 &
		spid=$!
		pod_argv "$path" c
		for i in $(seq 200); do grep -qs ready "$sink" && break; sleep 0.02; done
		# shellcheck disable=SC2046
		"$@" "${POD_ARGV[@]}" $(pinned tx) "$traffic" udp-blast "$sip" 5300 "$size" "$secs" >"$work/blast.out" || true
		wait "$spid" || { echo "NA NA NA"; return; }
		drops1=$(udp_rcvbuf_errors "$path")
		received=$(sed -n 2p "$sink")
		# Received by the sink; reached the socket (received + buffer drops) and sent, per
		# second of the blaster's run: what the datapath delivered, whatever the sink drained.
		awk -v r="$received" -v d=$((drops1 - drops0)) -v s="$secs" -v t="$(cat "$work/blast.out")" \
			'BEGIN { split(r, f, " "); printf "%s %.1f %s\n", f[1], (f[2] + d) / s / 1000, t == "" ? "NA" : t }'
		;;
	rrtcp | rrudp)
		# shellcheck disable=SC2046
		"$@" "${POD_ARGV[@]}" $(pinned rr) "$traffic" rr-client "${kind#rr}" "$sip" 5400 "$rr_count" ||
			echo "NA NA"
		;;
	esac
}

# rotated N WORD...: the words rotated left by N, reversed on odd N.
rotated() {
	local n=$1 i
	shift
	local words=("$@") k=$#
	for ((i = 0; i < k; i++)); do
		if ((n % 2)); then echo "${words[(k - 1 - i + n) % k]}"; else echo "${words[(i + n) % k]}"; fi
	done
}

csv=$work/samples.csv
echo "rep,class,path,metric,value" >"$csv"
# shellcheck disable=SC2086
for ((rep = 1; rep <= reps; rep++)); do
	echo "datapath: repetition $rep/$reps ($(date +%H:%M:%S))"
	for entry in "${classes[@]}"; do
		IFS='|' read -r name kind size _ _ <<<"$entry"
		for path in $(rotated "$rep" $paths); do
			read -r v1 v2 v3 <<<"$(measure "$path" "$kind" "$size")"
			if [ "${kind#rr}" != "$kind" ]; then
				echo "$rep,$name,$path,p50,${v1:-NA}" >>"$csv"
				echo "$rep,$name,$path,p99,${v2:-NA}" >>"$csv"
			elif [ "$kind" = udp ]; then
				printf '%s\n' "$rep,$name,$path,value,${v1:-NA}" \
					"$rep,$name,$path,atsock,${v2:-NA}" "$rep,$name,$path,sent,${v3:-NA}" >>"$csv"
			else
				echo "$rep,$name,$path,value,${v1:-NA}" >>"$csv"
			fi
		done
	done
done

# One run per class and velo path with BPF run-time stats held (stats cost ~75 ns per
# program run, so these runs are not among the timed ones).
stats_csv=$work/stats.csv
echo "path,class,id,program,run_cnt,run_time_ns,ns_per_run" >"$stats_csv"
echo "datapath: BPF program cost runs"
# Only this run's programs (pinned under its bpffsDir): other velo instances may run too.
prog_ids=$(find "$work/bpf/velo" -type f 2>/dev/null | while read -r pin; do
	bpftool prog show pinned "$pin" -j 2>/dev/null | jq -r '.id // empty' || true
	bpftool link show pinned "$pin" -j 2>/dev/null | jq -r '.prog_id // empty' || true
done | sort -un | paste -sd, -) || true
[ -n "$prog_ids" ] || prog_ids=0
for path in tc xdp sockmap; do
	[[ " $paths " == *" $path "* ]] || continue
	for entry in "${classes[@]}"; do
		IFS='|' read -r name kind size _ _ <<<"$entry"
		case $name in tcp64 | tcp128k | udp64 | rrtcp) ;; *) continue ;; esac
		measure "$path" "$kind" "$size" "$dp_stats" -o "$work/prog.csv" -i "$prog_ids" -- >/dev/null
		awk -F, -v p="$path" -v c="$name" '{ printf "%s,%s,%s,%s,%s,%s,%.1f\n", p, c, $1, $2, $3, $4, $4 / $3 }' \
			"$work/prog.csv" >>"$stats_csv"
	done
done

# A fast path that silently fell back would measure the routed path: its program must have run.
for want in tc:velo_tc_ingress xdp:velo_xdp_host sockmap:velo_sk_msg; do
	[[ " $paths " == *" ${want%%:*} "* ]] || continue
	grep -q "^${want%%:*},.*,${want#*:}," "$stats_csv" ||
		echo "datapath: WARNING: ${want#*:} never ran: velo ${want%%:*} fell back to routed" >&2
done

# Sanity counters: velo's outcome counters, frames veths dropped, checksum errors pods saw.
sanity=$work/sanity.txt
stat_names=(tc_redirect tc_pass tc_spoof xdp_redirect xdp_pass xdp_spoof ttl mtu nat no_ct)
{
	for map in "$work"/bpf/velo/velo_stats_v*; do
		[ -e "$map" ] || continue
		bpftool map dump pinned "$map" -j 2>/dev/null |
			jq -r '.[] | "\(.formatted.key) \([.formatted.values[].value] | add)"' |
			while read -r key value; do
				if [ "$value" != 0 ]; then
					echo "velo $(basename "$map") ${stat_names[$key]:-$key}=$value"
				fi
			done
	done
	for path in $paths; do
		for role in s c; do
			in_pod "$path" "$role" nstat -asz TcpInCsumErrors UdpInCsumErrors UdpRcvbufErrors 2>/dev/null |
				awk -v k="$path-$role" 'NR > 1 && $1 !~ /^#/ && $2 > 0 { printf "%s %s=%s\n", k, $1, $2 }'
		done
	done
	for link in $(in_node ip -o link show type veth | awk -F': ' '{ print $2 }' | sed 's/@.*//'); do
		in_node ethtool -S "$link" 2>/dev/null | awk -v l="$link" '/rx_queue_0_drops|xdp_drops|peer_tq_xdp_xmit_err/ && $2 > 0 { printf "node %s %s %s\n", l, $1, $2 }'
	done
} >"$sanity"

# ---------------------------------------------------------------- report
mkdir -p "$outdir"
md=$outdir/datapath.md
out_csv=$outdir/datapath.csv
cp "$csv" "$outdir/datapath_samples.csv"
cp "$stats_csv" "$outdir/datapath_stats.csv"

# summary CLASS PATH METRIC: "median min max" over the repetitions (NA dropped).
summary() {
	awk -F, -v c="$1" -v p="$2" -v m="$3" '$2 == c && $3 == p && $4 == m && $5 != "NA" { print $5 }' "$csv" |
		median_min_max
}
label() { case $1 in ptp | bridge) echo "$1" ;; *) echo "velo $1" ;; esac; }

velo_paths=$(for p in $paths; do case $p in ptp | bridge) ;; *) echo "$p" ;; esac; done | tr '\n' ' ')
header="| class | unit |"
rule="|---|---|"
for path in $paths; do header+=" $(label "$path") |"; rule+="---:|"; done
ratio_header="| class |"
ratio_rule="|---|"
for path in $paths; do
	[ "$path" = ptp ] && continue
	ratio_header+=" $(label "$path") |"
	ratio_rule+="---:|"
done
echo "class,metric,unit,path,median,min,max,ratio_to_ptp" >"$out_csv"
plotdat=$work/plot.dat
echo "class $(for p in $paths; do [ "$p" = ptp ] || echo -n "\"$(label "$p")\" "; done)" >"$plotdat"
{
	echo "# Pod-to-pod datapath: ptp, bridge and velo's paths"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs, iperf3 $(iperf3 -v | awk 'NR == 1 { print $2 }')," \
		"containernetworking-plugins $(dpkg-query -W -f '${Version}' containernetworking-plugins 2>/dev/null || echo '?')."
	echo "$reps alternating repetitions (path order rotated per class), ${secs}s per stream and UDP run, pod MTU $mtu,"
	echo "$rr_count round trips per latency run$([ -n "$rr_cpu" ] && echo ", both ends pinned to CPU $rr_cpu")." \
		"$([ -n "${tx_cpu:-}" ] && echo "Streams and UDP: sender on CPU $tx_cpu, receiver on CPU $rx_cpu.")"
	echo "Cells: median (min-max). Command (as root): \`DP_REPS=$reps DP_SECS=$secs DP_RR_COUNT=$rr_count DP_MTU=$mtu bench/datapath.sh\`"
	echo "Load average at the start: $load_start."
	echo
	echo "$header"
	echo "$rule"
} >"$md"
ratios_md=$work/ratios.md
{
	echo
	echo "Ratios against ptp (medians; throughput and packet rate: higher is better; latency: lower is better)."
	echo "\"fastest velo\": the best velo path by median; \"clear\" when its worst repetition beats every"
	echo "other velo path's best, else \"within spread\"."
	echo
	echo "$ratio_header fastest velo |"
	echo "$ratio_rule---|"
} >"$ratios_md"
for entry in "${classes[@]}"; do
	IFS='|' read -r name kind _ unit title <<<"$entry"
	metrics=value
	[ "${kind#rr}" != "$kind" ] && metrics="p50 p99"
	[ "$kind" = udp ] && metrics="value atsock"
	for metric in $metrics; do
		lower=0 order=-r
		case $metric in p50 | p99) lower=1 order=-s ;; esac
		row_title=$title
		case $metric in
		p50 | p99) row_title="$title, $metric" ;;
		atsock) row_title="${title%, packets received}, reaching the socket (received + buffer drops)" ;;
		esac
		row="| $row_title | $unit |"
		ratio_row="| $row_title |"
		plot_row="\"$row_title\""
		read -r ptp_med _ _ <<<"$(summary "$name" ptp "$metric")"
		declare -A med=() lo=() hi=()
		for path in $paths; do
			read -r m l h <<<"$(summary "$name" "$path" "$metric")"
			med[$path]=$m lo[$path]=$l hi[$path]=$h
			row+=" $m ($l-$h) |"
			r=$(ratio "$m" "$ptp_med")
			echo "$name,$metric,$unit,$path,$m,$l,$h,$r" >>"$out_csv"
			[ "$path" = ptp ] && continue
			ratio_row+=" ${r}x |"
			# The plot shows speed relative to ptp: latency inverted so that higher is better.
			if ((lower)); then plot_row+=" $(ratio "$ptp_med" "$m")"; else plot_row+=" $r"; fi
		done
		# Fastest velo path and whether its spread separates it from the rest.
		winner=$(for p in $velo_paths; do [ "${med[$p]}" != NA ] && echo "${med[$p]} $p"; done |
			sort -g -k1,1 "$order" | awk 'NR == 1 { print $2 }')
		verdict=-
		if [ -n "$winner" ]; then
			verdict="$(label "$winner"), clear"
			for p in $velo_paths; do
				[ "$p" = "$winner" ] || [ "${med[$p]}" = NA ] && continue
				if ((lower)); then
					awk -v a="${hi[$winner]}" -v b="${lo[$p]}" 'BEGIN { exit !(a < b) }' || verdict="$(label "$winner"), within spread"
				else
					awk -v a="${lo[$winner]}" -v b="${hi[$p]}" 'BEGIN { exit !(a > b) }' || verdict="$(label "$winner"), within spread"
				fi
			done
		fi
		echo "$row" >>"$md"
		echo "$ratio_row $verdict |" >>"$ratios_md"
		case $metric in p99 | atsock) ;; *) echo "$plot_row" >>"$plotdat" ;; esac
	done
done
cat "$ratios_md" >>"$md"

{
	echo
	echo "## Cost of velo's programs (BPF_ENABLE_STATS, one ${secs}s run per class, outside the timed runs)"
	echo
	echo "Programs pinned under this run's bpffsDir only; ns/run includes the ~75 ns the stats cost."
	echo
	if [ "$(wc -l <"$stats_csv")" -gt 1 ]; then
		echo "| path | class | program | runs | ns/run |"
		echo "|---|---|---|---:|---:|"
		tail -n +2 "$stats_csv" | sort -t, -k1,1 -k2,2 -k4,4 |
			awk -F, '{ printf "| velo %s | %s | %s | %s | %s |\n", $1, $2, $4, $5, $7 }'
	else
		echo "No velo program ran."
	fi
	echo
	echo "Routed and ptp/bridge paths run no velo program; sockmap pods' UDP takes the routed path."
	echo
	echo "## Sanity counters (non-zero only)"
	echo
	if [ -s "$sanity" ]; then sed 's/^/    /' "$sanity"; else echo "None: no checksum errors, no veth drops."; fi
} >>"$md"

# The plot: relative speed against ptp per class (latency inverted), one bar per path.
png=$outdir/datapath.png
ncols=$(($(wc -w <<<"$paths") - 1))
gnuplot <<GP || echo "datapath: gnuplot failed" >&2
set terminal pngcairo size 1200,650 noenhanced font ",10"
set bmargin 8
set output "$png"
set title "Pod-to-pod datapath relative to ptp (median of $reps; latency p50 inverted: higher is better)"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "x ptp"
set yrange [0:*]
set grid ytics
set xtics rotate by -25 scale 0
set key top left
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "black"
plot for [i=2:$((ncols + 1))] "$plotdat" using i:xtic(1) title columnheader(i)
GP
if [ "${DOCS:-0}" = 1 ] && [ -s "$png" ]; then cp "$png" "$top/docs/benchmarks-datapath.png"; fi

bench_results datapath "$md" "$md, $out_csv, $outdir/datapath_samples.csv, $outdir/datapath_stats.csv, $png" "$outdir/datapath_samples.csv"
