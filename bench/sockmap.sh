#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Socket short-circuit throughput by message size, same node, pod to pod, in one run:
# routed (velo without the annotation), sk_msg per-message verdict, sk_msg apply_bytes verdict
# (velo's default here), and an AF_UNIX socketpair (the same-host IPC limit). netperf-style:
# the sender writes SIZE-byte messages for SECONDS, the receiver reads 1 MiB buffers.
# Repetitions alternate the paths; medians with min-max spread; ratios.
# Usage: sudo bench/sockmap.sh [-o OUTDIR] [-r REPS] [-t SECONDS] [-s "SIZES"] [-n]
#   -n: also with TCP_NODELAY. Writes OUTDIR/sockmap.md and sockmap.csv.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
outdir=$top/build/bench reps=5 secs=1 nodelay=0
sizes="1 64 128 512 1024 2048 32768 65536 102400 512000 1048576"
while getopts "o:r:t:s:n" opt; do
	case "$opt" in
	o) outdir=$OPTARG ;;
	r) reps=$OPTARG ;;
	t) secs=$OPTARG ;;
	s) sizes=$OPTARG ;;
	n) nodelay=1 ;;
	*) exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "bench/sockmap.sh: needs root" >&2; exit 1; }
velo=${VELO:-$top/build/velo}
stream=$top/build/tests/sockmap_stream
for f in "$velo" "$stream" /usr/lib/cni/host-local; do
	[ -x "$f" ] || { echo "bench/sockmap.sh: $f missing (make; containernetworking-plugins)" >&2; exit 1; }
done
cgmount=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
	/proc/self/mountinfo | head -n 1)
[ -n "$cgmount" ] || { echo "bench/sockmap.sh: no cgroup2 mount" >&2; exit 1; }
mkdir -p "$outdir"

tag=$$
node=velotest-smbench-node-$tag
work=$(mktemp -d /tmp/velotest-smbench-XXXXXX)
bpffs_base=/sys/fs/bpf/velotest-smbench-$tag
pids=()
cleanup() {
	local pid ns cg
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for cg in "$cgmount"/velotest-smbench-"$tag"-*; do
		[ -d "$cg" ] || continue
		while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$cg/cgroup.procs"
	done
	sleep 0.2
	for cg in "$cgmount"/velotest-smbench-"$tag"-*; do [ -d "$cg" ] && rmdir "$cg" 2>/dev/null; done
	for ns in $(ip netns list | awk '{print $1}' | grep "^velotest-smbench-.*-$tag"); do
		ip netns del "$ns" 2>/dev/null || true
	done
	rm -rf "$bpffs_base"-* "$work"
}
trap cleanup EXIT

ip netns add "$node"
ip -n "$node" link set lo up
mkdir -p "$work/bin"
cp "$velo" "$work/bin/velo"
cp /usr/lib/cni/host-local "$work/bin/host-local"

# add_pod PATH_NAME N ANNOTATION: a pod of that path wired by velo; prints "ns cgroup ip".
add_pod() {
	local path=$1 n=$2 opt=$3 ns rel conf out
	ns=velotest-smbench-$path-$n-$tag
	rel=/velotest-smbench-$tag-$path-$n
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	mkdir "$cgmount$rel"
	conf=$(jq -cn --arg w "$work" --arg b "$bpffs_base-$path" --arg cg "$rel" --arg o "$opt" '{
		cniVersion: "1.0.0", name: "velotest-smbench", type: "velo", vethPrefix: "vb",
		stateDir: ($w + "/state"), runDir: ($w + "/run"), bpffsDir: $b,
		logFile: ($w + "/cni.log"),
		ipam: {type: "host-local", dataDir: ($w + "/ipam"), ranges: [[{subnet: "10.247.0.0/24"}]]},
		runtimeConfig: {"io.kubernetes.cri.pod-annotations": {"velo.dev/sockmap": $o},
			cgroupPath: $cg}}')
	out=$(nsenter --net="/run/netns/$node" env -i PATH="$PATH" CNI_COMMAND=ADD \
		CNI_CONTAINERID="smbench-$path-$n" CNI_NETNS="/run/netns/$ns" CNI_IFNAME=eth0 \
		CNI_PATH="$work/bin" VELO_SOCKMAP_MODE="${4:-}" "$work/bin/velo" <<<"$conf") ||
		{ echo "velo ADD failed: $out" >&2; exit 1; }
	echo "$ns $cgmount$rel $(jq -r '.ips[0].address | split("/")[0]' <<<"$out")"
}

# in_pod NS CGROUP CMD...
in_pod() {
	local ns=$1 cg=$2
	shift 2
	# shellcheck disable=SC2016
	nsenter --net="/run/netns/$ns" sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' \
		sh "$cg" "$@"
}

paths="routed per-message apply-bytes"
declare -A client server
for path in $paths; do
	case $path in
	routed) opt=false mode="" ;;
	*) opt=true mode=$path ;;
	esac
	read -r sns scg sip < <(add_pod "$path" s "$opt" "$mode")
	read -r cns ccg _ < <(add_pod "$path" c "$opt" "$mode")
	in_pod "$sns" "$scg" "$stream" sink 0.0.0.0 5100 >/dev/null &
	pids+=("$!")
	server[$path]=$sip
	client[$path]="$cns $ccg"
done
sleep 0.5

# measure PATH SIZE NODELAY: Gbit/s of one run.
measure() {
	local path=$1 size=$2 nd=$3 cns ccg
	if [ "$path" = unix ]; then
		"$stream" unix "$size" "$secs"
		return
	fi
	read -r cns ccg <<<"${client[$path]}"
	in_pod "$cns" "$ccg" "$stream" blast "${server[$path]}" 5100 "$size" "$secs" ${nd:+"$nd"}
}

median() { sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
	printf "%.2f %.2f %.2f", m, v[1], v[NR] }'; }

csv=$outdir/sockmap.csv md=$outdir/sockmap.md
echo "size,nodelay,path,rep,gbit" >"$csv"
variants="delay"
[ "$nodelay" = 1 ] && variants="delay nodelay"
for variant in $variants; do
	nd=""
	[ "$variant" = nodelay ] && nd=nodelay
	for size in $sizes; do
		for rep in $(seq "$reps"); do
			# Alternate the order each repetition so drift hits every path alike.
			order="routed per-message apply-bytes unix"
			[ $((rep % 2)) = 0 ] && order="unix apply-bytes per-message routed"
			for path in $order; do
				echo "$size,$variant,$path,$rep,$(measure "$path" "$size" "$nd")" >>"$csv"
			done
		done
	done
done

{
	echo "# Socket short-circuit: stream throughput by message size"
	echo
	echo "$(uname -r), $(nproc) CPUs, $reps alternating repetitions of ${secs}s, median Gbit/s (min-max)."
	echo "Command: \`sudo bench/sockmap.sh -r $reps -t $secs$([ "$nodelay" = 1 ] && echo " -n")\`"
	for variant in $variants; do
		echo
		echo "## $([ "$variant" = nodelay ] && echo "TCP_NODELAY" || echo "Nagle on (default)")"
		echo
		echo "| size | routed | per-message | apply_bytes | AF_UNIX | apply/routed | apply/per-msg | apply/unix |"
		echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
		for size in $sizes; do
			declare -A med=() row=()
			for path in routed per-message apply-bytes unix; do
				read -r m lo hi < <(awk -F, -v s="$size" -v v="$variant" -v p="$path" \
					'$1 == s && $2 == v && $3 == p {print $5}' "$csv" | median)
				med[$path]=$m
				row[$path]="$m ($lo-$hi)"
			done
			ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf (b > 0 ? "%.2fx" : "-"), a / b }'; }
			echo "| $size | ${row[routed]} | ${row[per-message]} | ${row[apply-bytes]} | ${row[unix]} |" \
				"$(ratio "${med[apply-bytes]}" "${med[routed]}") | $(ratio "${med[apply-bytes]}" "${med[per-message]}") |" \
				"$(ratio "${med[apply-bytes]}" "${med[unix]}") |"
		done
	done
} >"$md"
cat "$md"
