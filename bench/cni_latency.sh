#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CNI ADD/DEL latency of velo next to the reference ptp and bridge plugins, in one run.
#
# Each plugin runs on its own benchmark "node" (network namespace velobench-node-PID-PLUGIN),
# so that "N pods present" means N of that plugin's pods on its node, as on a real node (one
# shared node held every plugin's devices: four times as many veths and IPv6 routes, which the
# kernel's link events walk); IPAM alone and the spawn floor run in velobench-node-PID. For
# ADD@MANY one plugin at a time grows to MANY pods (-A: all at once, as before): five plugins'
# thousand pods each are five nodes' worth of devices on one kernel, whose costs are machine-wide
# (e.g. velo's veth creation took 0.70 ms there against 0.36 ms with 10 pods). Pods are
# network namespaces velobench-pod-PID-PLUGIN-N. The reference plugins use host-local IPAM
# (each its own /22 of 10.248.0.0/16 and its own dataDir); velo uses its own IPAM (-i velo, the
# default: "ipam": {"type": "velo"}, in process) with the same kind of range, or host-local
# like the others (-i host-local). Invocations alternate, in an order shuffled per pod, so machine
# noise hits all alike. host-local is also run alone with the same config so that velo's own
# time (velo minus IPAM, with -i host-local) can be given, and
# /bin/true is run through the same driver as the spawn floor. bench/cni_latency.c drives
# the invocations (see there why not a shell loop). velo's column appears when its binary
# (build/velo, or $VELO) exists. Files as on a node: velo's runDir (locks, records of ADDs in
# progress) on a tmpfs, as /run; velo's stateDir and log and every IPAM dataDir on a journaled
# ext4 (an image, loop-mounted), as /var/lib. This machine's root file system is an ext4 without
# a journal, where creating a file costs ~0.66 ms against ~25 us with a journal (the kernel then
# checks every candidate inode's deletion time): `-f root` keeps them under /tmp anyway.
# Everything is removed at exit, pass or fail.
#
# Usage (as root): bench/cni_latency.sh [-o OUTDIR] [-n PODS] [-b FEW] [-s MANY] [-k PROBES] [-r RSS_RUNS] [-f FS] [-i IPAM] [-S] [-A] [-R ROUNDS]
#   -o OUTDIR  results: cni_latency.md, cni_latency.csv, cni_latency_samples.csv, cni_latency_velo.log
#              (velo's log: each ADD timed by part, e.g. at10 vs at1000 probes) (build/bench)
#   -n PODS    pods per plugin for the ADD/DEL medians and p99 (100; at least 50 for p99)
#   -b FEW -s MANY  ADD latency with FEW (10) and with MANY (500) pods present
#   -k PROBES  ADD/DEL probes at each of those sizes (30)
#   -r RSS_RUNS  ADD/DEL pairs per plugin run under ptrace for the peak RSS (10)
#   -f FS      where state, logs and IPAM leases live: ext4 (a journaled image, default) or root
#   -i IPAM    velo's IPAM: velo (its own, in process; default) or host-local (exec'd, as ptp's)
#   -S         every plugin on one shared node, as before (ADD@N then has N pods of each plugin there)
#   -A         every plugin's MANY pods present at once for ADD@MANY, as before (by default one
#              plugin at a time grows to MANY while the others keep FEW)
#   -R ROUNDS  without -A, the fills to MANY per plugin, the probes split among them (3)
#   VELO_BASE=PATH  another velo build (e.g. the last commit's) as column velo-base, interleaved
#                   with the rest, so a change is judged side by side in one run
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

outdir=$top/build/bench
pods=100
few=10
many=500
probes=30
rss_runs=10
data_fs=ext4
velo_ipam=velo
shared_node=0
all_at_once=0
rounds=3
while getopts "o:n:b:s:k:r:f:i:SAR:h" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	n) pods=$OPTARG ;;
	b) few=$OPTARG ;;
	s) many=$OPTARG ;;
	k) probes=$OPTARG ;;
	r) rss_runs=$OPTARG ;;
	f) data_fs=$OPTARG ;;
	i) velo_ipam=$OPTARG ;;
	S) shared_node=1 ;;
	A) all_at_once=1 ;;
	R) rounds=$OPTARG ;;
	*) sed -n 's/^# \{0,1\}//; 27,41p' "$0" >&2; exit 2 ;;
	esac
done
for value in "$pods" "$few" "$many" "$probes" "$rss_runs" "$rounds"; do
	[[ $value =~ ^[1-9][0-9]*$ ]] || { echo "counts must be positive integers" >&2; exit 2; }
done
((few < many)) || { echo "-b must be smaller than -s" >&2; exit 2; }
[[ $data_fs == ext4 || $data_fs == root ]] || { echo "-f is ext4 or root" >&2; exit 2; }
[[ $velo_ipam == velo || $velo_ipam == host-local ]] || { echo "-i is velo or host-local" >&2; exit 2; }
# Each plugin's IPAM range is a /22: 1022 addresses.
((pods <= 1000 && many <= 1000)) || { echo "-n and -s must be at most 1000" >&2; exit 2; }
((pods >= 50)) || echo "note: fewer than 50 pods: p99 is the maximum" >&2

[ "$(id -u)" = 0 ] || { echo "cni_latency: needs root (network namespaces)" >&2; exit 1; }
ref_dir=/usr/lib/cni
for tool in "$ref_dir/ptp" "$ref_dir/bridge" "$ref_dir/host-local"; do
	[ -x "$tool" ] || { echo "cni_latency: $tool missing (apt-get install containernetworking-plugins)" >&2; exit 1; }
done
velo=${VELO:-$top/build/velo}
velod=${VELOD:-$top/build/velod}
velo_base=${VELO_BASE:-}

# shellcheck source=bench/lib.bash
source "$top/bench/lib.bash"
work=$(mktemp -d /tmp/velobench-XXXXXX)
node=velobench-node-$$
pod_prefix=velobench-pod-$$
netns_list=$work/netns.list
: >"$netns_list"
velod_pid=""
cleanup() {
	set +e
	[ -n "$velod_pid" ] && kill "$velod_pid" 2>/dev/null && wait "$velod_pid" 2>/dev/null
	if [ -s "$netns_list" ]; then
		sed 's/^/netns del /' "$netns_list" | ip -force -batch - 2>/dev/null
	fi
	for label in "${labels[@]}"; do ip netns del "$node-$label" 2>/dev/null; done
	ip netns del "$node" 2>/dev/null
	# velo mounts bpffs at its bpffsDir if none is there.
	bench_umount "$work/velo/bpffs" "$work/velod/bpffs" "$work/velo-base/bpffs" "$work/tmpfs" \
		"$work/disk"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

driver=$work/cni_latency
bench_cc "$driver" "$top/bench/cni_latency.c"

labels=(ptp bridge)
# velo-velod: velo with its node agent running, so DEL retires the veth for velod to delete.
[ -x "$velo" ] && [ -x "$velod" ] && labels=(velo-velod "${labels[@]}")
[ -x "$velo" ] && labels=(velo "${labels[@]}")
[ -n "$velo_base" ] && labels+=(velo-base)

for name in "$node" "${labels[@]/#/$node-}"; do
	ip netns add "$name"
	ip -n "$name" link set lo up
	# An uplink with an address, as a real node has, next after lo: a route through a veth
	# without an IPv4 address takes its source from the first addressed device, and with none
	# the kernel walks every device of the node on each route it adds (inet_select_addr).
	ip -n "$name" link add vbup type veth peer name vbupp
	ip -n "$name" addr add 198.51.100.1/24 dev vbup
	ip -n "$name" link set vbup up
	# A fresh node: forwarding off until a plugin turns it on.
	for key in net.ipv4.ip_forward net.ipv6.conf.all.forwarding; do
		ip netns exec "$name" sysctl -qw "$key=0"
	done
done
# Not plugins under test but timed the same way: IPAM alone and the spawn floor.
extras=(host-local spawn)

mkdir -p "$work/tmpfs" "$work/disk"
mount -t tmpfs -o mode=0700,size=64m velobench-run "$work/tmpfs"
disk=$work
if [ "$data_fs" = ext4 ]; then
	truncate -s 1G "$work/disk.img"
	mkfs.ext4 -q -F "$work/disk.img"
	mount -o loop "$work/disk.img" "$work/disk"
	disk=$work/disk
fi
ipam() { # ipam NAME SUBNET [TYPE]
	printf '{"type":"%s","dataDir":"%s","ranges":[[{"subnet":"%s"}]]}' "${3:-host-local}" \
		"$disk/ipam/$1" "$2"
}
mkdir -p "$work/velo" "$work/velod" "$work/velo-base" "$disk/ipam"
cat >"$work/velo.json" <<JSON
{"cniVersion":"1.0.0","name":"velobench-velo","type":"velo","vethPrefix":"vb",
 "stateDir":"$disk/velo/state","runDir":"$work/tmpfs/velo","bpffsDir":"$work/velo/bpffs",
 "logFile":"$disk/velo/cni.log","ipam":$(ipam velo 10.248.0.0/22 "$velo_ipam")}
JSON
cat >"$work/velo-velod.json" <<JSON
{"cniVersion":"1.0.0","name":"velobench-velod","type":"velo","vethPrefix":"vd",
 "stateDir":"$disk/velod/state","runDir":"$work/tmpfs/velod","bpffsDir":"$work/velod/bpffs",
 "logFile":"$disk/velod/cni.log","ipam":$(ipam velo-velod 10.248.16.0/22 "$velo_ipam")}
JSON
cat >"$work/velo-base.json" <<JSON
{"cniVersion":"1.0.0","name":"velobench-base","type":"velo","vethPrefix":"vx",
 "stateDir":"$disk/velo-base/state","runDir":"$work/tmpfs/velo-base","bpffsDir":"$work/velo-base/bpffs",
 "logFile":"$disk/velo-base/cni.log","ipam":$(ipam velo-base 10.248.20.0/22 "$velo_ipam")}
JSON
cat >"$work/velod.conf.json" <<JSON
{"stateDir":"$disk/velod/state","runDir":"$work/tmpfs/velod","bpffsDir":"$work/velod/bpffs",
 "cniPath":"$ref_dir","listen":"","reconcileIntervalSeconds":0,"sampleIntervalSeconds":0}
JSON
cat >"$work/ptp.json" <<JSON
{"cniVersion":"1.0.0","name":"velobench-ptp","type":"ptp","ipMasq":false,
 "ipam":$(ipam ptp 10.248.4.0/22)}
JSON
cat >"$work/bridge.json" <<JSON
{"cniVersion":"1.0.0","name":"velobench-bridge","type":"bridge","bridge":"velobench0",
 "isGateway":true,"ipMasq":false,"ipam":$(ipam bridge 10.248.8.0/22)}
JSON
cat >"$work/host-local.json" <<JSON
{"cniVersion":"1.0.0","name":"velobench-hostlocal","type":"host-local",
 "ipam":$(ipam host-local 10.248.12.0/22)}
JSON
driver_args=(-P "$ref_dir" -o "$work/plugins.out"
	-p "velo=$velo:$work/velo.json" -p "velo-velod=$velo:$work/velo-velod.json"
	-p "velo-base=${velo_base:-/bin/false}:$work/velo-base.json"
	-p "ptp=$ref_dir/ptp:$work/ptp.json"
	-p "bridge=$ref_dir/bridge:$work/bridge.json"
	-p "host-local=$ref_dir/host-local:$work/host-local.json" -p "spawn=/bin/true:/dev/null")
((shared_node)) || for label in "${labels[@]}"; do driver_args+=(-n "$label=/run/netns/$node-$label"); done

# Pod namespaces: 1..max(pods, many) per plugin plus a probe namespace each (for the RSS runs);
# each probe ADD gets a namespace of its own (make_netns, below).
count=$((pods > many ? pods : many))
for label in "${labels[@]}"; do
	for ((i = 1; i <= count; i++)); do echo "$pod_prefix-$label-$i"; done
	echo "$pod_prefix-$label-probe"
done >"$netns_list"
sed 's/^/netns add /' "$netns_list" | ip -batch -
# host-local and /bin/true ignore the namespace; they get the node's.
netns_of() { # netns_of LABEL N
	case $1 in
	host-local | spawn) echo "/run/netns/$node" ;;
	*) echo "/run/netns/$pod_prefix-$1-$2" ;;
	esac
}

samples=$work/samples.csv
echo "tag,label,verb,containerid,usec,maxrss_kb,hwm_kb,status" >"$samples"
# make_netns PLANFILE: the plan's pod namespaces not made yet, made before it runs (untimed)
# and deleted at exit. A runtime gives every new sandbox a new netns; probes sharing one met
# the veth of the DEL before them, which velo leaves to velod to delete, and velo-velod's ADD
# then deleted it itself (~20 ms of grace periods).
make_netns() {
	awk '{ print $5 }' "$1" | sed -n "s|^/run/netns/\($pod_prefix-.*\)|\1|p" | sort -u |
		{ grep -vxFf "$netns_list" || true; } >"$work/netns.new"
	cat "$work/netns.new" >>"$netns_list"
	sed 's/^/netns add /' "$work/netns.new" | ip -batch -
}
run_plan() { # run_plan PLANFILE: the driver runs it inside the base node, each plugin in its own
	make_netns "$1"
	in_node "$driver" "${driver_args[@]}" <"$1" | tail -n +2 >>"$samples"
}
# shuffled N WORD...: the words in an order drawn afresh for each N (and the same in every
# run), so no plugin always goes first or always follows the same one: a plugin's ADD slows
# the one after it (bridge's leaves kernel work behind; /bin/true leaves none), and with a
# fixed rotation that cost fell on the same plugin every time (~5% on ADD medians).
shuffled() {
	local words=("${@:2}") i j word
	RANDOM=$1
	for ((i = ${#words[@]} - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		word=${words[i]} words[i]=${words[j]} words[j]=$word
	done
	printf '%s\n' "${words[@]}"
}
invocation() { # invocation TAG LABEL VERB ID NETNS-N MODE
	echo "$1 $2 $3 velobench-$4 $(netns_of "$2" "$5") eth0 $6"
}

if [[ " ${labels[*]} " == *" velo-velod "* ]]; then
	# nsenter execs velod, so $! is velod itself (a function would fork a subshell).
	nsenter --net="/run/netns/$([ "$shared_node" = 1 ] && echo "$node" || echo "$node-velo-velod")" \
		"$velod" --config "$work/velod.conf.json" 2>"$work/velod.log" &
	velod_pid=$!
	for _ in $(seq 50); do [ -s "$work/velod.log" ] && break; sleep 0.1; done
	grep -q 'velod .* started' "$work/velod.log" || { cat "$work/velod.log" >&2; exit 1; }
fi
echo "cni_latency: plugins ${labels[*]} (+ ${extras[*]}); $pods pods, ADD at $few and $many pods; velo's IPAM: $velo_ipam"
[ -x "$velo" ] || echo "cni_latency: $velo not built: reference plugins only"

# 1. ADD then DEL of $pods pods per plugin, interleaved.
plan=$work/plan
for verb in ADD DEL; do
	for ((i = 1; i <= pods; i++)); do
		for label in $(shuffled "$i" "${labels[@]}" "${extras[@]}"); do
			invocation main "$label" "$verb" "$label-$i" "$i" time
		done
	done
done >"$plan"
echo "cni_latency: ADD/DEL x $pods ..."
run_plan "$plan"

# 2. Fill to $few pods, peak RSS under ptrace, then probes (ADD, DEL) with $few and with $many
# pods present. host-local takes part to show how much of a slowdown is the IPAM's.
fill() { # fill VERB FROM TO LABEL...: ADD (or DEL) of those pods of each plugin, interleaved
	local verb=$1 from=$2 to=$3 i label
	shift 3
	for ((i = from; i <= to; i++)); do
		for label in $(shuffled "$i" "$@"); do
			invocation fill "$label" "$verb" "$label-fill-$i" "$i" time
		done
	done
}
probe() { # probe TAG FROM TO LABEL...: ADD and DEL of a probe pod per plugin, numbered FROM..TO
	local tag=$1 from=$2 to=$3 k label
	shift 3
	for ((k = from; k <= to; k++)); do
		for verb in ADD DEL; do
			for label in $(shuffled "$k" "$@"); do
				invocation "$tag" "$label" "$verb" "$label-$tag-$k" "probe-$tag-$k" time
			done
		done
	done
}
fill ADD 1 "$few" "${labels[@]}" host-local >"$plan"
# Without -A each plugin's ADD@FEW probes come with its ADD@MANY ones, below.
((all_at_once)) && probe "at$few" 1 "$probes" "${labels[@]}" host-local >>"$plan"
echo "cni_latency: $few pods per plugin ..."
run_plan "$plan"

for ((k = 1; k <= rss_runs; k++)); do
	for verb in ADD DEL; do
		for label in $(shuffled "$k" "${labels[@]}" "${extras[@]}"); do
			invocation rss "$label" "$verb" "$label-rss-$k" probe rss
		done
	done
done >"$plan"
echo "cni_latency: peak RSS x $rss_runs ..."
run_plan "$plan"

if ((all_at_once)); then
	fill ADD $((few + 1)) "$many" "${labels[@]}" host-local >"$plan"
	probe "at$many" 1 "$probes" "${labels[@]}" host-local >>"$plan"
	echo "cni_latency: ADD with $many pods present ..."
	run_plan "$plan"
else
	# One plugin at a time: its pods grow to $many while the others keep $few, so that the
	# machine holds about $many pods, as a node does, and not one node's worth per plugin.
	# Its ADD@FEW probes come just before the fill and just after the pods are gone again,
	# so that both sizes are timed within seconds of each other on this noisy machine.
	# Over $rounds rounds, each in its own plugin order, so that a burst of noise hits one
	# round's probes, not all of one size's.
	link_count() { ip -n "$1" -o link show | wc -l; }
	# probe_set TAG FROM TO LABEL: probes after the same lead-in every time, a 2 s pause and
	# three untimed ADD/DELs. Probes right after a burst of ADDs (the fill) ran ~25% faster
	# than after a pause, which would have flattered ADD@MANY.
	warmed=0
	probe_set() {
		sleep 2
		{
			probe warm $((warmed + 1)) $((warmed + 3)) "$4"
			probe "$@"
		} >"$plan"
		warmed=$((warmed + 3))
		run_plan "$plan"
	}
	per_round=$(((probes + rounds - 1) / rounds))
	for ((round = 1; round <= rounds; round++)); do
		first=$(((round - 1) * per_round + 1))
		last=$((round * per_round < probes ? round * per_round : probes))
		half=$(((first + last) / 2))
		for label in $(shuffled "$round" "${labels[@]}" host-local); do
			echo "cni_latency: round $round/$rounds: $label's ADD with $few, then $many of its pods present ..."
			node_ns=$node
			[ "$shared_node" = 1 ] || [ "$label" = host-local ] || node_ns=$node-$label
			links=$(link_count "$node_ns")
			probe_set "at$few" "$first" "$half" "$label"
			fill ADD $((few + 1)) "$many" "$label" >"$plan"
			run_plan "$plan"
			probe_set "at$many" "$first" "$last" "$label"
			fill DEL $((few + 1)) "$many" "$label" >"$plan"
			run_plan "$plan"
			# velo's DEL leaves its veths for a child (or velod) to delete: let that finish
			# before the pause.
			for _ in $(seq 300); do
				(($(link_count "$node_ns") <= links)) && break
				sleep 0.1
			done
			probe_set "at$few" $((half + 1)) "$last" "$label"
		done
	done
fi

# Statistics over successful samples: "median p99 count" in ms (p99: nearest rank).
stats() { # stats TAG LABEL VERB
	awk -F, -v t="$1" -v l="$2" -v v="$3" '$1 == t && $2 == l && $3 == v && $8 == 0 { print $5 }' \
		"$samples" | sort -n | awk '{ a[NR] = $1 }
		END {
			if (NR == 0) { print "NA NA 0"; exit }
			med = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			r = int(0.99 * NR); if (r < 0.99 * NR) r++
			printf "%.2f %.2f %d\n", med / 1000, a[r] / 1000, NR
		}'
}
max_kb() { # max_kb TAG LABEL COLUMN: largest value in MiB
	awk -F, -v t="$1" -v l="$2" -v c="$3" '$1 == t && $2 == l && $c > m { m = $c }
		END { if (m == "") print "NA"; else printf "%.1f\n", m / 1024 }' "$samples"
}
failures() { # failures LABEL
	awk -F, -v l="$1" 'NR > 1 && $2 == l && $8 != 0 { n++ } END { print n + 0 }' "$samples"
}
calc() { # calc AWK-EXPRESSION (NA in, NA out)
	case "$*" in
	*NA*) echo NA ;;
	*) awk "BEGIN { printf \"%.3f\", $* }" ;; # 3 places: verdicts must not pass by rounding
	esac
}
verdict() { # verdict VALUE LIMIT
	case $1 in
	NA) echo "n/a" ;;
	*) awk -v v="$1" -v l="$2" 'BEGIN { print (v <= l ? "yes" : "NO") }' ;;
	esac
}

mkdir -p "$outdir"
md=$outdir/cni_latency.md
csv=$outdir/cni_latency.csv
cp "$samples" "$outdir/cni_latency_samples.csv"
[ -f "$disk/velo/cni.log" ] && cp "$disk/velo/cni.log" "$outdir/cni_latency_velo.log"
rm -f "$outdir/cni_latency_plugins.out"

declare -A add_med del_med scale_ratio rss_own add_few add_many
failed_total=0
{
	echo "# CNI ADD/DEL latency"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs," \
		"containernetworking-plugins $(dpkg-query -W -f '${Version}' containernetworking-plugins 2>/dev/null || echo '?')."
	echo "$pods pods per plugin, invocations interleaved; ADD@$few/ADD@$many: medians of $probes probe"
	echo "ADDs with that many pods present. host-local IPAM (IPv4 /22) for the reference plugins;"
	echo "velo's IPAM: $velo_ipam (-i), the same kind of range."
	echo "host-local: the IPAM plugin alone with the same config; spawn: /bin/true, the driver's floor."
	echo "velo's runDir on tmpfs; state, logs and leases on $([ "$data_fs" = ext4 ] &&
		echo "a journaled ext4 image" || echo "this machine's root file system (ext4 without a journal)") (-f $data_fs)."
	echo
	echo "| plugin | ADD median ms | ADD p99 ms | DEL median ms | DEL p99 ms | peak RSS own MiB | peak RSS incl. children MiB | ADD@$few ms | ADD@$many ms | ADD@$many/ADD@$few | failed |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
} >"$md"
echo "plugin,add_median_ms,add_p99_ms,del_median_ms,del_p99_ms,samples,rss_own_max_mib,rss_with_children_max_mib,add_at_few_ms,add_at_many_ms,scale_ratio,failed" >"$csv"
for label in "${labels[@]}" "${extras[@]}"; do
	read -r am ap an <<<"$(stats main "$label" ADD)"
	read -r dm dp _ <<<"$(stats main "$label" DEL)"
	own=$(max_kb rss "$label" 7)
	all=$(max_kb main "$label" 6)
	small=NA large=NA ratio=NA
	if [ "$label" != spawn ]; then
		read -r small _ _ <<<"$(stats "at$few" "$label" ADD)"
		read -r large _ _ <<<"$(stats "at$many" "$label" ADD)"
		ratio=$(calc "$large / $small")
	fi
	nfail=$(failures "$label")
	failed_total=$((failed_total + nfail))
	add_med[$label]=$am del_med[$label]=$dm scale_ratio[$label]=$ratio rss_own[$label]=$own
	add_few[$label]=$small add_many[$label]=$large
	echo "| $label | $am | $ap | $dm | $dp | $own | $all | $small | $large | $ratio | $nfail |" >>"$md"
	echo "$label,$am,$ap,$dm,$dp,$an,$own,$all,$small,$large,$ratio,$nfail" >>"$csv"
done

# log_median FIELD...: the median over velo's "added:" log lines of the sum of the named
# timings ("before IPAM", "after"), in ms; NA without such lines.
log_median() {
	sed -n 's/.*added: .* in [0-9.]* ms: \([0-9.]*\) before IPAM, veth [0-9.]* beside IPAM, IPAM [0-9.]*, \([0-9.]*\) after.*/\1 \2/p' \
		"$disk/velo/cni.log" 2>/dev/null | awk '{ print $1 + $2 }' | sort -n |
		awk '{ a[NR] = $1 } END {
			if (NR == 0) { print "NA"; exit }
			printf "%.2f\n", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

if [ -x "$velo" ]; then
	# Targets: velo's own IPAM (issue 18) is held to tighter ones than the exec'd host-local.
	if [ "$velo_ipam" = velo ]; then
		add_ratio=0.25 del_ratio=0.2 scale_limit=1.1
	else
		add_ratio=0.5 del_ratio=0.3 scale_limit=1.2
	fi
	own_add=$(calc "${add_med[velo]} - ${add_med[host-local]}")
	own_del=$(calc "${del_med[velo]} - ${del_med[host-local]}")
	row() { # row WHAT VALUE TARGET LIMIT
		echo "| $1 | $2 | ${3:--} | $([ -n "${4:-}" ] && verdict "$2" "$4" || echo -) |"
	}
	{
		echo
		echo "| velo | value | target | met |"
		echo "|---|---|---|---|"
		row "ADD median velo/ptp" "$(calc "${add_med[velo]} / ${add_med[ptp]}")" "<= $add_ratio" "$add_ratio"
		row "DEL median velo/ptp (no velod: a child DEL forks deletes the veth)" \
			"$(calc "${del_med[velo]} / ${del_med[ptp]}")" "<= $del_ratio" "$del_ratio"
		if [ -n "${del_med[velo-velod]:-}" ]; then
			row "ADD median velo-velod/ptp" "$(calc "${add_med[velo-velod]} / ${add_med[ptp]}")" "<= $add_ratio" "$add_ratio"
			row "DEL median velo-velod/ptp (velod deletes the veth)" \
				"$(calc "${del_med[velo-velod]} / ${del_med[ptp]}")" "<= $del_ratio" "$del_ratio"
			if [ "$velo_ipam" = host-local ]; then
				row "own DEL ms with velod (velo-velod - host-local medians)" \
					"$(calc "${del_med[velo-velod]} - ${del_med[host-local]}")" "<= 1.5 ms" 1.5
			fi
		fi
		if [ -n "$velo_base" ]; then
			row "ADD median velo/velo-base ($velo_base)" \
				"$(calc "${add_med[velo]} / ${add_med[velo-base]}")"
			row "DEL median velo/velo-base" "$(calc "${del_med[velo]} / ${del_med[velo-base]}")"
		fi
		row "ADD median velo/bridge" "$(calc "${add_med[velo]} / ${add_med[bridge]}")"
		row "DEL median velo/bridge" "$(calc "${del_med[velo]} / ${del_med[bridge]}")"
		if [ "$velo_ipam" = velo ]; then
			row "velo's whole ADD, its own IPAM included (median ms)" "${add_med[velo]}" "<= 1.5 ms" 1.5
		else
			# Subtracting host-local's medians means something only where velo runs host-local.
			row "own ADD ms (velo - host-local medians)" "$own_add" "<= 1.5 ms" 1.5
			row "own DEL ms (velo - host-local medians)" "$own_del" "<= 1.5 ms" 1.5
		fi
		row "velo's work in process, outside IPAM (its log: before + after IPAM, median ms)" \
			"$(log_median)"
		row "... plus the spawn floor (/bin/true, median ms)" \
			"$(calc "$(log_median) + ${add_med[spawn]}")" "<= 1.5 ms" 1.5
		row "peak RSS own MiB (max)" "${rss_own[velo]}" "<= 8" 8
		row "ADD@$many / ADD@$few" "${scale_ratio[velo]}" "<= $scale_limit" "$scale_limit"
		if [ "$velo_ipam" = host-local ]; then
			row "ADD@$many / ADD@$few, host-local medians subtracted" \
				"$(calc "(${add_many[velo]} - ${add_many[host-local]}) / (${add_few[velo]} - ${add_few[host-local]})")"
		fi
	} >>"$md"
fi
{
	echo
	if ((shared_node)); then
		echo "Latency: wall time from spawn to reaped exit; every plugin on one shared node (-S), so"
		echo "ADD@N has N pods of each plugin on that node."
	else
		echo "Latency: wall time from spawn to reaped exit; each plugin on its own node namespace, so"
		echo "ADD@N has N of that plugin's pods on its node (IPAM alone and the spawn floor: a fifth)."
	fi
	if ((all_at_once)); then
		echo "ADD@$many: every plugin had its $many pods at once (-A)."
	else
		echo "ADD@$many: one plugin at a time had $many pods, the others $few, in $rounds rounds; each"
		echo "plugin's ADD@$few probes came just before and just after its $many pods in each round."
	fi
	echo "velo's own part subtracts host-local's median (run alone, same config) from velo's; it"
	echo "still contains velo's exec and its spawn of host-local, and host-local's slowdown from"
	echo "sharing the CPUs with velo's veth creation, which runs beside it. velo's log line of each"
	echo "ADD times its parts: what it does before and after IPAM is its own work; the exec before"
	echo "main() is not timed there (the spawn floor stands in for it). Peak RSS own: VmHWM read under"
	echo "ptrace at the plugin's exit ($rss_runs ADD/DEL pairs each); incl. children: wait4 ru_maxrss,"
	echo "which also counts the IPAM plugin the plugin waited for. host-local's ADD reads every"
	echo "lease file of its network (to find the container's existing lease), so its own ADD@$many"
	echo "/ADD@$few shows how much of every plugin's slowdown with many pods is the IPAM's."
} >>"$md"

echo
cat "$md"
echo
echo "cni_latency: results in $md, $csv, $outdir/cni_latency_samples.csv (and velo's log)"
if ((failed_total > 0)); then
	cp "$work/plugins.out" "$outdir/cni_latency_plugins.out"
	echo "cni_latency: $failed_total invocations failed; plugin output in $outdir/cni_latency_plugins.out:" >&2
	grep -m 5 "\"msg\"" "$work/plugins.out" >&2 || true
	exit 1
fi
