#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Socket short-circuit, same node, pod to pod, every path in one run: the reference ptp plugin,
# velo routed (velo.dev/sockmap "false"), velo's sk_msg redirect with a per-message verdict and
# with an apply_bytes verdict (velo's default here; VELO_SOCKMAP_MODE at ADD, each mode in its
# own bpffs dir), and an AF_UNIX stream socket (the same-host IPC limit). Measured:
#   stream  tests/node/sockmap/sockmap_stream blast/sink/unix: SIZE-byte writes for SECONDS,
#           the reader reads 1 MiB buffers; Gbit/s; Nagle on and (-n) TCP_NODELAY; streams unpinned
#   rr      bench/sm_rr: 64-byte ping-pong for SECONDS, p50 and p99 in us, client and server
#           pinned to the same CPU (0) and to different CPUs (0 and 1)
#   conn    bench/sm_rr: connect, send 64 B, read 64 B, close, in a loop; connections/s,
#           same two pinnings
# Repetitions alternate the path order; medians with min-max spread; ratios against the
# issue's targets. Then one run per stream size (Nagle on), rr and conn class and sk_msg mode
# under BPF_ENABLE_STATS (bench/dp_stats.c, outside the timed runs) for ns per program run.
#
# Topology: a node netns velotest-smbench-node-PID (pods wired inside it with nsenter, so no
# pod route exists in the root namespace), two pod netns per path, velo's state, IPAM, logs
# and the AF_UNIX sockets under /tmp/velotest-smbench-XXXXXX, velo's pins under
# /sys/fs/bpf/velotest-smbench-PID-PATH, cgroups velotest-smbench-PID-* under the cgroup2 mount
# (runtimeConfig cgroupPath; the traffic processes are moved into them). Traffic only between
# these namespaces (and over AF_UNIX). Everything is removed at exit, pass or fail.
#
# Usage (as root): bench/sockmap.sh [-o OUTDIR] [-r REPS] [-t SECONDS] [-s "SIZES"] [-n]
#   -o OUTDIR   sockmap.md, sockmap.csv, sockmap_samples.csv, sockmap_stats.csv, sockmap.png
#               (default build/bench)
#   -r REPS     alternating repetitions (5)
#   -t SECONDS  per measurement (1)
#   -s SIZES    stream write sizes in bytes (1 64 128 512 1K 2K 32K 64K 100K 500K 1M)
#   -n          streams also with TCP_NODELAY
#   DOCS=1      also copy the plot to docs/benchmarks-sockmap.png
# Needs: make (build/velo), make build/tests/sockmap_stream build/bench/sm_rr (`make bench`
# builds both), containernetworking-plugins (ptp, host-local), jq, gnuplot, libbpf-dev.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
outdir=$top/build/bench reps=5 secs=1 nodelay=0
default_sizes="1 64 128 512 1024 2048 32768 65536 102400 512000 1048576"
sizes=$default_sizes
while getopts "o:r:t:s:nh" opt; do
	case "$opt" in
	o) outdir=$OPTARG ;;
	r) reps=$OPTARG ;;
	t) secs=$OPTARG ;;
	s) sizes=$OPTARG ;;
	n) nodelay=1 ;;
	*) sed -n 's/^# \{0,1\}//; 24,33p' "$0" >&2; exit 2 ;;
	esac
done
# shellcheck source=bench/lib.bash
source "$top/bench/lib.bash"
# shellcheck disable=SC2086 # one size a word
bench_pod_checks bench/sockmap.sh $sizes
velo=${VELO:-$top/build/velo}
stream=$top/build/tests/sockmap_stream
sm_rr=$top/build/bench/sm_rr
bench_need bench/sockmap.sh "$velo" "$stream" "$sm_rr" /usr/lib/cni/ptp /usr/lib/cni/host-local \
	-- jq gnuplot bpftool taskset
mkdir -p "$outdir"
bench_start bench/sockmap.sh velotest-smbench
bpffs_base=$bpffs
cp "$velo" "$work/bin/velo"
cp /usr/lib/cni/ptp /usr/lib/cni/host-local "$work/bin/"

paths="ptp routed per-message apply-bytes unix"
tcp_paths="ptp routed per-message apply-bytes"
sm_paths="per-message apply-bytes"
label() {
	case $1 in
	ptp) echo ptp ;; routed) echo "velo routed" ;; per-message) echo per-message ;;
	apply-bytes) echo apply_bytes ;; unix) echo AF_UNIX ;;
	esac
}

# config PATH CGROUP_REL: the network config of that path's pods (same MTU for all).
config() {
	local opt=true
	if [ "$1" = ptp ]; then
		jq -cn --arg w "$work" '{cniVersion: "1.0.0", name: "velotest-smbench-ptp", type: "ptp",
			ipMasq: false, mtu: 1500,
			ipam: {type: "host-local", dataDir: ($w + "/ipam-ptp"), ranges: [[{subnet: "10.247.1.0/24"}]]}}'
		return
	fi
	[ "$1" = routed ] && opt=false
	jq -cn --arg w "$work" --arg b "$bpffs_base-$1" --arg cg "$2" --arg o "$opt" \
		--argjson bugs "$BENCH_ACCEPT_BUGS" '{
		cniVersion: "1.0.0", name: "velotest-smbench", type: "velo", vethPrefix: "vb", mtu: 1500,
		stateDir: ($w + "/state"), runDir: ($w + "/run"), bpffsDir: $b,
		logFile: ($w + "/cni.log"), sockmapAcceptKernelBugs: $bugs,
		ipam: {type: "host-local", dataDir: ($w + "/ipam"), ranges: [[{subnet: "10.247.0.0/24"}]]},
		runtimeConfig: {"io.kubernetes.cri.pod-annotations": {"velo.dev/sockmap": $o},
			cgroupPath: $cg}}'
}

declare -A pod_ns pod_cg pod_ip server_pid
# add_pod PATH ROLE: a pod netns (and for velo a cgroup) wired by that path's plugin.
add_pod() {
	local path=$1 key=$1-$2 ns rel="" mode="" plugin=velo out
	ns=velotest-smbench-$key-$tag
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	if [ "$path" = ptp ]; then
		plugin=ptp
	else
		rel=/velotest-smbench-$tag-$key
		mkdir "$cgmount$rel"
		pod_cg[$key]=$cgmount$rel
	fi
	case $path in per-message | apply-bytes) mode=$path ;; esac
	out=$(config "$path" "$rel" | nsenter --net="/run/netns/$node" env -i PATH="$PATH" CNI_COMMAND=ADD \
		CNI_CONTAINERID="smbench-$key" CNI_NETNS="/run/netns/$ns" CNI_IFNAME=eth0 \
		CNI_PATH="$work/bin" VELO_SOCKMAP_MODE="$mode" "$work/bin/$plugin") ||
		{ echo "bench/sockmap.sh: $path ADD failed: $out" >&2; exit 1; }
	pod_ns[$key]=$ns
	pod_ip[$key]=$(jq -r '.ips[0].address | split("/")[0]' <<<"$out")
}
# endpoint PATH KIND: where that path's rr or conn server listens.
endpoint() {
	if [ "$1" = unix ]; then echo "$work/$2.sock"; else echo "${pod_ip[$1-s]}:$([ "$2" = rr ] && echo 5200 || echo 5300)"; fi
}

echo "bench/sockmap.sh: wiring pods ($(date +%H:%M:%S))"
for path in $tcp_paths; do
	add_pod "$path" s
	add_pod "$path" c
	start_pod_servers "$path"
done
start_server unix rr "$sm_rr" rr-server "$(endpoint unix rr)"
start_server unix conn "$sm_rr" conn-server "$(endpoint unix conn)"
for path in $tcp_paths; do
	pod_argv "$path" c
	"${POD_ARGV[@]}" ping -c 1 -W 2 "${pod_ip[$path-s]}" >/dev/null ||
		{ echo "bench/sockmap.sh: $path: client cannot reach server" >&2; exit 1; }
done

# cpus PLACEMENT: "CLIENT_CPU SERVER_CPU".
cpus() { if [ "$1" = same ]; then echo "0 0"; else echo "0 1"; fi; }

# measure CLASS VARIANT SIZE PATH [PREFIX...]: the value(s) of one run; PREFIX (dp_stats)
# wraps the client. Prints NA (stream, conn) or "NA NA" (rr) when the run failed.
measure() {
	local class=$1 variant=$2 size=$3 path=$4 ccpu scpu nd=""
	shift 4
	if [ "$path" = unix ]; then POD_ARGV=(); else pod_argv "$path" c; fi
	case $class in
	stream)
		[ "$variant" = nodelay ] && nd=nodelay
		if [ "$path" = unix ]; then
			"$@" "$stream" unix "$size" "$secs" 2>>"$work/clients.log" || echo NA
		else
			"$@" "${POD_ARGV[@]}" "$stream" blast "${pod_ip[$path-s]}" 5100 "$size" "$secs" ${nd:+"$nd"} \
				2>>"$work/clients.log" || echo NA
		fi
		;;
	rr | conn)
		read -r ccpu scpu <<<"$(cpus "$variant")"
		taskset -a -p -c "$scpu" "${server_pid[$path-$class]}" >/dev/null
		"$@" "${POD_ARGV[@]}" taskset -c "$ccpu" "$sm_rr" "$class-client" "$(endpoint "$path" "$class")" "$secs" \
			2>>"$work/clients.log" || { [ "$class" = rr ] && echo "NA NA" || echo NA; }
		;;
	esac
}

csv=$work/samples.csv
echo "class,variant,size,path,rep,metric,value" >"$csv"
variants="delay"
[ "$nodelay" = 1 ] && variants="delay nodelay"
n_runs=$(($(wc -w <<<"$sizes") * $(wc -w <<<"$variants") + 2 * $(wc -w <<<"$placements")))
# Timed runs, then the program cost runs; ~0.05 s per run on top of the measurement.
echo "bench/sockmap.sh: $reps repetitions of ${secs}s, about" \
	"$(awk -v n="$n_runs" -v r="$reps" -v s="$secs" -v k="$(wc -w <<<"$sizes")" \
		'BEGIN { printf "%.0f", (n * r * 5 + (k + 2) * 2) * (s + 0.05) + 5 }')s"
# order REP: the paths forward on odd repetitions, backward on even ones (drift hits all alike).
for variant in $variants; do
	for size in $sizes; do
		for rep in $(seq "$reps"); do
			for path in $(order "$rep"); do
				echo "stream,$variant,$size,$path,$rep,gbit,$(measure stream "$variant" "$size" "$path")" >>"$csv"
			done
		done
	done
	echo "bench/sockmap.sh: streams ($variant) done ($(date +%H:%M:%S))"
done
measure_rr_conn bench/sockmap.sh 64

# One run per stream size (Nagle on), rr and conn (same CPU) and sk_msg mode with BPF run-time
# stats held (~75 ns per program run, so these runs are not among the timed ones). Each mode's
# programs are told apart by the ids pinned under its own bpffs dir.
stats_csv=$work/stats.csv
echo "path,class,size,id,program,run_cnt,run_time_ns,ns_per_run" >"$stats_csv"
for path in $sm_paths; do
	ids=$(find "$bpffs_base-$path" -type f 2>/dev/null | while read -r pin; do
		bpftool prog show pinned "$pin" -j 2>/dev/null | jq -r '.id // empty' || true
		bpftool link show pinned "$pin" -j 2>/dev/null | jq -r '.prog_id // empty' || true
	done | sort -un | paste -sd, -) || true
	[ -n "$ids" ] || { echo "bench/sockmap.sh: $path: no program pinned under $bpffs_base-$path" >&2; ids=0; }
	runs=()
	for size in $sizes; do runs+=("stream delay $size"); done
	runs+=("rr same 64" "conn same 64")
	for run in "${runs[@]}"; do
		read -r class variant size <<<"$run"
		measure "$class" "$variant" "$size" "$path" "$dp_stats" -o "$work/prog.csv" -i "$ids" -- >/dev/null
		awk -F, -v p="$path" -v c="$class" -v s="$size" \
			'{ printf "%s,%s,%s,%s,%s,%s,%s,%.1f\n", p, c, s, $1, $2, $3, $4, $4 / $3 }' \
			"$work/prog.csv" >>"$stats_csv"
	done
done
echo "bench/sockmap.sh: program cost runs done ($(date +%H:%M:%S))"
# A sockmap path whose pods stayed routed would measure the routed path: sk_msg must have run.
for path in $sm_paths; do
	grep -q "^$path,.*,velo_sk_msg,[1-9]" "$stats_csv" || {
		echo "bench/sockmap.sh: $path: velo_sk_msg never ran: its pods stayed routed" \
			"(cni.log: $(grep -m1 -o 'sockmap[^"]*routed[^"]*' "$work/cni.log" || echo '?'))" >&2
		exit 1
	}
done

# ---------------------------------------------------------------- report
csv_out=$outdir/sockmap.csv md=$outdir/sockmap.md png=$outdir/sockmap.png
cp "$csv" "$outdir/sockmap_samples.csv"
cp "$stats_csv" "$outdir/sockmap_stats.csv"
bench_met=yes bench_not_met=NO
human() {
	awk -v b="$1" 'BEGIN {
		if (b >= 1048576 && b % 1048576 == 0) printf "%dM", b / 1048576
		else if (b >= 1024 && b % 1024 == 0) printf "%dK", b / 1024
		else printf "%d", b }'
}
declare -A med
echo "class,variant,size,path,metric,median,min,max" >"$csv_out"

plotdat=$work/plot.dat
{
	echo "# Socket short-circuit: velo's sockmap next to routed paths"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs, containernetworking-plugins" \
		"$(dpkg-query -W -f '${Version}' containernetworking-plugins 2>/dev/null || echo '?')."
	echo "$reps repetitions of ${secs}s per measurement, path order alternating; cells: median (min-max)."
	echo "Command (as root): \`bench/sockmap.sh -r $reps -t $secs$([ "$nodelay" = 1 ] && echo " -n")$(
		[ "$sizes" = "$default_sizes" ] || echo " -s \"$sizes\"")\`"
	echo "Paths: ptp (reference plugin), velo routed (velo.dev/sockmap \"false\"), per-message and"
	echo "apply_bytes (sk_msg redirect; VELO_SOCKMAP_MODE), AF_UNIX (stream socket, no netns)."
	echo "The sk_msg paths' conflist accepts the sockhash kernel bugs velo probes for, by name"
	echo "(sockmapAcceptKernelBugs $BENCH_ACCEPT_BUGS): on a kernel that has one, velo would keep"
	echo "those pods routed. This kernel's: $(jq -r '.kernel.sockmapKernelBugs // [] | join(", ")' \
		<<<"$("$top/build/veloctl" -j --state-dir "$work/state" --run-dir "$work/run" \
			--bpffs "$bpffs_base-apply-bytes" status 2>/dev/null)" 2>/dev/null || echo '?')."
	for variant in $variants; do
		echo
		echo "## Stream throughput, Gbit/s, $([ "$variant" = nodelay ] && echo "TCP_NODELAY" || echo "Nagle on (default)")"
		echo
		echo "| size | ptp | velo routed | per-message | apply_bytes | AF_UNIX | routed/ptp | apply/routed | apply/per-msg | apply/unix |"
		echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		[ "$variant" = delay ] && echo "size ptp \"velo routed\" per-message apply_bytes AF_UNIX" >"$plotdat"
		for size in $sizes; do
			row="| $(human "$size") |"
			for path in $paths; do
				cell stream "$variant" "$size" "$path" gbit
				row+=" $CELL |"
			done
			m() { echo "${med[stream,$variant,$size,$1,gbit]}"; }
			row+=" $(ratio "$(m routed)" "$(m ptp)") | $(ratio "$(m apply-bytes)" "$(m routed)") |"
			row+=" $(ratio "$(m apply-bytes)" "$(m per-message)") | $(ratio "$(m apply-bytes)" "$(m unix)") |"
			echo "$row"
			if [ "$variant" = delay ]; then
				echo "$size $(for path in $paths; do m "$path" | sed 's/^NA$/?/'; done | paste -sd' ')" >>"$plotdat"
			fi
		done
	done

	echo
	rr_conn_tables "## Request/response latency, 64 B ping-pong, us (TCP_NODELAY)" 64

	echo
	echo "## Against the issue's targets (ratios of medians)"
	echo
	echo "| ratio | value | target | met |"
	echo "|---|---:|---|---|"
	for placement in $placements; do
		r=$(ratio "${med[rr,$placement,64,apply-bytes,p50]}" "${med[rr,$placement,64,routed,p50]}")
		raw=$(ratio_raw "${med[rr,$placement,64,apply-bytes,p50]}" "${med[rr,$placement,64,routed,p50]}")
		if [ "$placement" = same ]; then
			echo "| RR p50 apply_bytes / velo routed, $(placement_title same) | $r | <= 0.5 | $(met "$raw" "<=" 0.5) |"
		else
			echo "| RR p50 apply_bytes / velo routed, $(placement_title cross) | $r | - | - |"
		fi
	done
	for placement in $placements; do
		echo "| RR p50 apply_bytes / AF_UNIX, $(placement_title "$placement") |" \
			"$(ratio "${med[rr,$placement,64,apply-bytes,p50]}" "${med[rr,$placement,64,unix,p50]}") | - | - |"
		echo "| RR p50 velo routed / ptp, $(placement_title "$placement") |" \
			"$(ratio "${med[rr,$placement,64,routed,p50]}" "${med[rr,$placement,64,ptp,p50]}") | - | - |"
	done
	for placement in $placements; do
		r=$(ratio_raw "${med[conn,$placement,64,apply-bytes,cps]}" "${med[conn,$placement,64,routed,cps]}")
		echo "| connections/s apply_bytes / velo routed, $(placement_title "$placement") |" \
			"$(awk -v r="$r" 'BEGIN { if (r == "NA") print r; else printf "%.3f", r }') | >= 0.95 | $(met "$r" ">=" 0.95) |"
		echo "| connections/s velo routed / ptp, $(placement_title "$placement") |" \
			"$(ratio "${med[conn,$placement,64,routed,cps]}" "${med[conn,$placement,64,ptp,cps]}") | - | - |"
	done
	echo
	echo "Stream ratios are in the throughput tables (apply/routed, apply/per-msg, apply/unix, routed/ptp)."

	echo
	echo "## Cost of velo's programs (BPF_ENABLE_STATS, one ${secs}s run each, outside the timed runs)"
	echo
	echo "Both ends' programs (only those pinned under that mode's bpffsDir); ns/run includes the"
	echo "~75 ns the stats cost. Streams: Nagle on; rr and conn: same CPU."
	echo
	if [ "$(wc -l <"$stats_csv")" -gt 1 ]; then
		echo "| mode | run | program | runs | ns/run |"
		echo "|---|---|---|---:|---:|"
		tail -n +2 "$stats_csv" | while IFS=, read -r p c s _ prog cnt _ nsr; do
			what=$c
			[ "$c" = stream ] && what="stream $(human "$s")"
			echo "| $(label "$p") | $what | $prog | $cnt | $nsr |"
		done
	else
		echo "No velo program ran."
	fi
	echo
	echo "## Sanity"
	echo
	eagain=$(cat "$work/clients.log" "$work/servers.log" 2>/dev/null |
		awk '/EAGAIN/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "EAGAIN") n += $i } END { print n + 0 }')
	echo "EAGAIN from blocking reads on sockhash sockets (kernel tcp_bpf_recvmsg, retried and counted):" \
		"$eagain. Failed measurements (NA): $(grep -c ',NA$' "$csv" || true)."
	for path in $sm_paths; do
		grep -q "^$path,stream,.*,velo_sk_msg," "$stats_csv" ||
			echo "WARNING: velo_sk_msg never ran for $(label "$path"): those pods took the routed path."
	done
} >"$md"

gnuplot <<GP || echo "bench/sockmap.sh: gnuplot failed" >&2
set terminal pngcairo size 1000,600 noenhanced font ",10"
set output "$png"
set title "Pod-to-pod stream throughput by write size, Nagle on (median of $reps x ${secs}s, kernel $(uname -r))"
set datafile missing "?"
set logscale x 2
set logscale y 10
set xlabel "write size (bytes, log)"
set ylabel "Gbit/s (log)"
set xtics ("1" 1, "64" 64, "512" 512, "4K" 4096, "32K" 32768, "256K" 262144, "1M" 1048576)
set grid xtics ytics mytics
set key top left
colors = "#7f7f7f #1f77b4 #2ca02c #d62728 #9467bd"
plot for [i=2:6] "$plotdat" using 1:i with linespoints lw 2 pt 7 lc rgb word(colors, i - 1) title columnheader(i)
GP
if [ "${DOCS:-0}" = 1 ] && [ -s "$png" ]; then cp "$png" "$top/docs/benchmarks-sockmap.png"; fi

bench_results bench/sockmap.sh "$md" "$md, $csv_out, $outdir/sockmap_samples.csv, $outdir/sockmap_stats.csv, $png" "$outdir/sockmap_samples.csv"
