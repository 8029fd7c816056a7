# SPDX-License-Identifier: Apache-2.0
# Helpers the benchmark scripts share (sourced, not run).

# The sockhash kernel bugs velo probes for (docs/sockmap.md), as sockmapAcceptKernelBugs takes
# them. Where the kernel has one, velo keeps sockmap pods routed unless the conflist accepts it
# by name; the benches accept them all, as an operator whose pods avoid those patterns may, so
# that they measure the short-circuit.
# shellcheck disable=SC2034 # used by the scripts that source this
BENCH_ACCEPT_BUGS='["halfclose-eagain", "splice-ingress", "waitall-short", "rcvlowat-ignored"]'

# cgroup_kill CG: as a runtime does: cgroup.kill (a loop over cgroup.procs misses pids when the
# list shifts), then wait (5 s at most) for cgroup.procs to be empty.
cgroup_kill() {
	echo 1 >"$1/cgroup.kill" || return 1
	for _ in $(seq 100); do
		[ -n "$(cat "$1/cgroup.procs")" ] || return 0
		sleep 0.05
	done
	echo "cgroup $1 still has processes: $(tr '\n' ' ' <"$1/cgroup.procs")" >&2
	return 1
}

# bench_pod_checks SCRIPT SIZE...: the pod benches' (sockmap.sh, services.sh) checks of their
# options ($reps, $secs, each SIZE) and of root; exits 2 (usage) or 1 (not root) saying which.
bench_pod_checks() {
	local script=$1 size
	shift
	[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "$script: -r wants a positive integer" >&2; exit 2; }
	[[ $secs =~ ^[0-9]*\.?[0-9]+$ ]] || { echo "$script: -t wants seconds" >&2; exit 2; }
	for size in "$@"; do
		[[ $size =~ ^[1-9][0-9]*$ ]] || { echo "$script: bad size $size" >&2; exit 2; }
	done
	[ "$(id -u)" = 0 ] || { echo "$script: needs root" >&2; exit 1; }
}

# bench_need SCRIPT FILE... -- TOOL...: exits 1 naming the first executable or command missing.
bench_need() {
	local script=$1 f
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		[ -x "$1" ] || { echo "$script: $1 missing (make bench; hack/install-deps.sh)" >&2; exit 1; }
		shift
	done
	[ $# -eq 0 ] || shift
	for f in "$@"; do
		command -v "$f" >/dev/null || { echo "$script: $f missing (hack/install-deps.sh)" >&2; exit 1; }
	done
}

# bench_cgroup2_mount: the cgroup2 mount, from mountinfo (never hard-coded).
bench_cgroup2_mount() {
	awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
		/proc/self/mountinfo | head -n 1
}

# bench_cc OUT SRC [LDLIBS...]: builds a bench tool, every bench with the same flags.
bench_cc() {
	local out=$1 src=$2
	shift 2
	${CC:-gcc} -std=gnu11 -O2 -D_GNU_SOURCE -Wall -Wextra -Werror -o "$out" "$src" "$@"
}

# bench_start SCRIPT PREFIX: what the pod benches (sockmap.sh, services.sh) set up alike. Sets
# cgmount (the cgroup2 mount), placements, tag, node (netns PREFIX-node-PID, lo up), work
# (/tmp/PREFIX-XXXXXX, with bin/), bpffs (/sys/fs/bpf/PREFIX-PID; the scripts may use it or
# PREFIX-PID-*), pids (background processes to kill), dp_stats (bench/dp_stats.c built) and the
# trap that removes all of it, pass or fail (bench_cleanup).
bench_start() {
	bench_script=$1 bench_prefix=$2
	cgmount=$(bench_cgroup2_mount)
	[ -n "$cgmount" ] || { echo "$bench_script: no cgroup2 mount" >&2; exit 1; }
	# Two placements for rr and conn: both ends on CPU 0, and client on 0, server on 1.
	placements="same cross"
	[ "$(nproc)" -ge 2 ] || placements="same"
	tag=$$
	node=$bench_prefix-node-$tag
	bench_netns_re="^$bench_prefix-.*-$tag\$"
	work=$(mktemp -d "/tmp/$bench_prefix-XXXXXX")
	bpffs=/sys/fs/bpf/$bench_prefix-$tag
	pids=()
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	dp_stats=$work/dp_stats
	# shellcheck disable=SC2046 # the libs' words
	bench_cc "$dp_stats" "$top/bench/dp_stats.c" $(pkg-config --libs libbpf)
	ip netns add "$node"
	ip -n "$node" link set lo up
	mkdir -p "$work/bin"
}

# bench_node_start SCRIPT PREFIX: what the one-node benches (datapath.sh, policy.sh, flows.sh)
# set up alike. Sets tag, node (netns PREFIX-PID, lo up, forwarding off as on a fresh node; its
# pods are PREFIX-PID-*), work (/tmp/PREFIX-XXXXXX; velo's bpffsDir under $work/bpf), pids,
# stats_was (kernel.bpf_stats_enabled, put back at exit) and the trap that removes all of it,
# pass or fail (bench_cleanup; cgroups PREFIX-PID-* too where the script set cgmount).
bench_node_start() {
	bench_script=$1 bench_prefix=$2
	tag=$$
	node=$bench_prefix-$tag
	bench_netns_re="^$bench_prefix-$tag(-|\$)"
	work=$(mktemp -d "/tmp/$bench_prefix-XXXXXX")
	pids=()
	stats_was=$(sysctl -n kernel.bpf_stats_enabled)
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	ip netns add "$node"
	in_node ip link set lo up
	for key in net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv6.conf.all.forwarding; do
		in_node sysctl -qw "$key=0"
	done
}

# in_node CMD...: CMD in the bench's node.
in_node() { nsenter --net="/run/netns/$node" "$@"; }

# bench_umount DIR...: unmounts whatever is mounted on each DIR (velo mounts a bpffs at its
# bpffsDir, or on its parent, if none covers it).
bench_umount() {
	local dir
	for dir in "$@"; do
		while mountpoint -q "$dir" 2>/dev/null; do umount "$dir" || break; done
	done
}

# bench_two_nodes_start PREFIX VETH SUBNET: what the cross-node benches (routing.sh, uplink.sh) set
# up alike. Sets ns (PREFIX-PID), work (/tmp/PREFIX-XXXXXX, with n1/ and n2/ for the nodes'
# velo state), pids, traffic (bench/dp_traffic.c built) and the EXIT trap that stops pids and
# what the script's more_pids prints (its velods), then removes everything; makes the underlay
# and its two nodes, NS-n1 and NS-n2 (bench_two_nodes NS VETH SUBNET).
bench_two_nodes_start() {
	ns=$1-$$
	work=$(mktemp -d "/tmp/$1-XXXXXX")
	pids=()
	trap bench_two_nodes_exit EXIT
	trap 'exit 130' INT TERM
	traffic=$work/dp_traffic
	bench_cc "$traffic" "$top/bench/dp_traffic.c"
	bench_two_nodes "$ns" "$2" "$3"
	mkdir -p "$work/n1" "$work/n2"
}

bench_two_nodes_exit() {
	local more=()
	if declare -F more_pids >/dev/null; then read -ra more <<<"$(more_pids)"; fi
	bench_two_nodes_cleanup "$ns" "$work" "${pids[@]}" "${more[@]}"
}

# in_ns NAME CMD...: CMD in the cross-node bench's netns $ns-NAME.
in_ns() {
	local n=$1
	shift
	nsenter --net="/run/netns/$ns-$n" "$@"
}

# bench_two_nodes NS VETH SUBNET: the cross-node benches' underlay. A bridge (br0 in netns
# NS-ul) and two nodes, netns NS-n1 and NS-n2, each on it through a veth (VETH1, VETH2 on the
# bridge, ul0 in the node) with SUBNET.1/24 and SUBNET.2/24, lo up, forwarding off as on a fresh
# node. bench_two_nodes_cleanup removes it.
bench_two_nodes() {
	local ns=$1 veth=$2 subnet=$3 n
	ip netns add "$ns-ul"
	ip -n "$ns-ul" link add br0 type bridge
	ip -n "$ns-ul" link set br0 up
	for n in 1 2; do
		ip netns add "$ns-n$n"
		ip link add "$veth$n" netns "$ns-ul" type veth peer name ul0 netns "$ns-n$n"
		ip -n "$ns-ul" link set "$veth$n" master br0 up
		ip -n "$ns-n$n" link set lo up
		ip -n "$ns-n$n" addr add "$subnet.$n/24" dev ul0
		ip -n "$ns-n$n" link set ul0 up
		nsenter --net="/run/netns/$ns-n$n" sysctl -qw net.ipv4.ip_forward=0 \
			net.ipv6.conf.all.forwarding=0
	done
}

# bench_two_nodes_cleanup NS WORK PID...: the cross-node benches' EXIT trap: stops each PID (velods,
# servers), then removes every netns NS-* (nodes, underlay, pods), the bpffs velo mounted for
# WORK/n1 and WORK/n2 (unpinning detaches the links) and WORK.
bench_two_nodes_cleanup() {
	set +e
	local ns=$1 work=$2 pid n
	shift 2
	for pid in "$@"; do kill "$pid" 2>/dev/null; done
	sleep 0.3
	for n in $(ip netns list | awk '{ print $1 }' | grep "^$ns-"); do ip netns del "$n"; done
	for n in 1 2; do
		rm -rf "$work/n$n/bpf/velo" 2>/dev/null
		bench_umount "$work/n$n/bpf"
	done
	rm -rf "$work"
}

# bench_two_nodes_pod N NAME NET CONF_JSON: a pod (netns $ns-NAME) on node N of bench_two_nodes,
# wired by velo's ADD ($velo, host-local IPAM in NET.N.0/24, CNI_PATH $ref_dir, state under
# $work/nN) with CONF_JSON merged into the conflist (an mtu, a runtimeConfig); prints its IPv4
# address.
bench_two_nodes_pod() {
	ip netns add "$ns-$2"
	ip -n "$ns-$2" link set lo up
	jq -cn --arg t "$work/n$1" --arg n "$1" --arg net "$3" --argjson x "$4" '{cniVersion: "1.0.0",
		name: "velobench", type: "velo", vethPrefix: "vb", stateDir: ($t + "/state"),
		runDir: ($t + "/run"), bpffsDir: ($t + "/bpf/velo"), logFile: ($t + "/cni.log"),
		ipam: {type: "host-local", dataDir: ($t + "/ipam"),
			ranges: [[{subnet: ($net + "." + $n + ".0/24")}]]}} + $x' >"$work/$2.conf"
	nsenter --net="/run/netns/$ns-n$1" env -i PATH="$PATH" CNI_COMMAND=ADD \
		CNI_CONTAINERID="velobench-$2" CNI_NETNS="/run/netns/$ns-$2" CNI_IFNAME=eth0 \
		CNI_PATH="$ref_dir" "$velo" <"$work/$2.conf" | jq -r '.ips[0].address | sub("/.*"; "")'
}

# bench_iperf_gbit NETNS SERVER SECS: one iperf3 TCP stream of 128 KiB writes from NETNS to an
# iperf3 server on SERVER:5201 for SECS seconds; prints Gbit/s received, NA on failure.
bench_iperf_gbit() {
	local out
	out=$(nsenter --net="/run/netns/$1" timeout $(($3 + 30)) iperf3 -c "$2" -p 5201 -t "$3" \
		-l 131072 -J 2>/dev/null) || true
	jq -r 'if .error then "NA" else (.end.sum_received.bits_per_second / 1e9 * 1000 | round / 1000) end' \
		<<<"$out" 2>/dev/null || echo NA
}

# bench_results SCRIPT MD RESULTS SAMPLES: the end of a bench: its table, where its results are;
# exits 1 if a measurement failed (an NA in $csv, whose copy is SAMPLES).
bench_results() {
	cat "$2"
	echo
	echo "$1: results in $3"
	if grep -q ',NA$' "$csv"; then
		echo "$1: some measurements failed (NA in $4)" >&2
		exit 1
	fi
}

# bench_cleanup: the EXIT trap of bench_start and bench_node_start. Stops pids, then runs the
# script's bench_cleanup_more if it has one (a velod it restarts, say), then removes cgroups,
# network namespaces, pins and files.
bench_cleanup() {
	set +e
	local pid ns cg
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
	if declare -F bench_cleanup_more >/dev/null; then bench_cleanup_more; fi
	if [ -n "${cgmount:-}" ]; then
		for cg in "$cgmount/$bench_prefix-$tag"-*; do
			[ -d "$cg" ] && cgroup_kill "$cg"
		done
		for cg in "$cgmount/$bench_prefix-$tag"-*; do [ -d "$cg" ] && rmdir "$cg"; done
	fi
	for ns in $(ip netns list | awk '{ print $1 }' | grep -E -- "$bench_netns_re"); do
		ip netns del "$ns"
	done
	# velo mounts a bpffs on its bpffsDir's parent if none covers it; unpinning detaches links.
	rm -rf "$work/bpf/velo" 2>/dev/null
	bench_umount "$work/bpf"
	[ -z "${bpffs:-}" ] || rm -rf "$bpffs" "$bpffs"-*
	rm -rf "$work"
	[ -z "${stats_was:-}" ] || sysctl -qw kernel.bpf_stats_enabled="$stats_was"
}

# pod_argv PATH ROLE: POD_ARGV = the command prefix that runs in that pod's netns (pod_ns) and,
# when it has one, its cgroup (pod_cg).
pod_argv() {
	# shellcheck disable=SC2016
	POD_ARGV=(nsenter --net="/run/netns/${pod_ns[$1-$2]}" sh -c \
		'[ -z "$1" ] || echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "${pod_cg[$1-$2]:-}")
}

# start_server PATH KIND CMD...: runs a server of that path in its pod (path "unix": on the
# node), waits for it to say "ready" ("listening" for a sink); server_pid[PATH-KIND] is it.
start_server() {
	local path=$1 kind=$2 _try
	shift 2
	if [ "$path" = unix ]; then
		"$@" >"$work/ready-$path-$kind" 2>>"$work/servers.log" &
	else
		pod_argv "$path" s
		"${POD_ARGV[@]}" "$@" >"$work/ready-$path-$kind" 2>>"$work/servers.log" &
	fi
	# nsenter and sh exec: $! is the server itself (its CPU affinity is set through it).
	pids+=("$!")
	# shellcheck disable=SC2004 # an associative array the script declares
	server_pid[$path-$kind]=$!
	for _try in $(seq 100); do
		[ "$kind" = sink ] && grep -qs listening "$work/ready-$path-$kind" && return
		grep -qs ready "$work/ready-$path-$kind" && return
		sleep 0.05
	done
	echo "$bench_script: $path $kind server did not start" >&2
	exit 1
}

# start_pod_servers PATH: the pod benches' servers of PATH in its server pod (sink, rr, conn:
# ports 5100, 5200, 5300), $stream and $sm_rr their tools; its client pod may reuse TIME_WAIT
# ports, as conn-client opens thousands of connections a second.
start_pod_servers() {
	nsenter --net="/run/netns/${pod_ns[$1-c]}" sysctl -qw net.ipv4.tcp_tw_reuse=1 \
		net.ipv4.ip_local_port_range="1024 65535"
	start_server "$1" sink "$stream" sink 0.0.0.0 5100
	start_server "$1" rr "$sm_rr" rr-server 0.0.0.0:5200
	start_server "$1" conn "$sm_rr" conn-server 0.0.0.0:5300
}

# order REP: $paths, reversed on even repetitions, so that no path always runs first.
order() { if (($1 % 2)); then echo "$paths"; else tr ' ' '\n' <<<"$paths" | tac | paste -sd' '; fi; }

# measure_rr_conn SCRIPT [SIZE]: the pod benches' latency and connection classes: rr (p50, p99)
# and conn (connections per second) in every placement, $reps repetitions of every path in
# order, each the script's `measure CLASS PLACEMENT [SIZE] PATH`, appended to $csv
# (CLASS,PLACEMENT,[SIZE,]PATH,REP,METRIC,VALUE).
measure_rr_conn() {
	local script=$1 size=${2:-} class placement rep path v1 v2
	for class in rr conn; do
		for placement in $placements; do
			for rep in $(seq "$reps"); do
				for path in $(order "$rep"); do
					read -r v1 v2 _ <<<"$(measure "$class" "$placement" ${size:+"$size"} "$path")"
					if [ "$class" = rr ]; then
						echo "rr,$placement,${size:+$size,}$path,$rep,p50,$v1" >>"$csv"
						echo "rr,$placement,${size:+$size,}$path,$rep,p99,$v2" >>"$csv"
					else
						echo "conn,$placement,${size:+$size,}$path,$rep,cps,$v1" >>"$csv"
					fi
				done
			done
		done
		echo "$script: $class done ($(date +%H:%M:%S))"
	done
}

# placement_title PLACEMENT: how the tables name it.
placement_title() { if [ "$1" = same ]; then echo "same CPU (0, 0)"; else echo "different CPUs (client 0, server 1)"; fi; }

# rr_conn_tables HEADING [SIZE]: the pod benches' markdown tables of measure_rr_conn's classes,
# the first under HEADING; each cell from the script's `cell CLASS PLACEMENT [SIZE] PATH METRIC`
# (which sets CELL) and each path's name from its `label PATH`.
rr_conn_tables() {
	local heading=$1 size=${2:-}
	echo "$heading"
	echo
	echo "| path | placement | p50 | p99 |"
	echo "|---|---|---:|---:|"
	rr_conn_rows rr "$size" p50 p99
	echo
	echo "## Connection rate: connect, 64 B each way, close; connections/s"
	echo
	echo "| path | placement | connections/s |"
	echo "|---|---|---:|"
	rr_conn_rows conn "$size" cps
}

# rr_conn_rows CLASS SIZE METRIC...: a table row per placement and path, a cell per METRIC.
rr_conn_rows() {
	local class=$1 size=$2 placement path metric row
	shift 2
	for placement in $placements; do
		for path in $paths; do
			row="| $(label "$path") | $(placement_title "$placement") |"
			for metric in "$@"; do
				cell "$class" "$placement" ${size:+"$size"} "$path" "$metric"
				row+=" $CELL |"
			done
			echo "$row"
		done
	done
}

# median_min_max: "median min max" of the numbers on stdin, one a line ("NA NA NA" for none).
median_min_max() {
	sort -g | awk '{ v[NR] = $1 }
	END {
		if (!NR) { print "NA NA NA"; exit }
		printf "%g %g %g\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR]
	}'
}

# csv_summary KEY... METRIC: "median min max" of the values in $csv (rows KEY...,REP,METRIC,VALUE:
# leading columns equal to KEY..., then any repetition) over the repetitions, NA dropped.
csv_summary() {
	local n=$(($# - 1))
	awk -F, -v n="$n" -v key="$(IFS=,; echo "${*:1:n}")" -v m="${!#}" '
		{ k = $1; for (i = 2; i <= n; i++) k = k "," $i }
		k == key && $(n + 2) == m && $(n + 3) != "NA" { print $(n + 3) }' "$csv" | median_min_max
}

# cell KEY... METRIC: CELL="median (min-max)" of csv_summary KEY... METRIC (NA if none); the
# median also in med[KEY,...,METRIC] (the script declares med) and a row in $csv_out. Not in a
# subshell: med[] must persist.
cell() {
	local key m lo hi
	key=$(IFS=,; echo "$*")
	read -r m lo hi <<<"$(csv_summary "$@")"
	med[$key]=$m
	echo "$key,$m,$lo,$hi" >>"$csv_out"
	if [ "$m" = NA ]; then CELL=NA; else CELL="$m ($lo-$hi)"; fi
}

# met VALUE OP LIMIT: whether VALUE is OP (<= or >=) LIMIT, in the script's words ($bench_met,
# $bench_not_met); NA for NA.
met() {
	awk -v v="$1" -v op="$2" -v l="$3" -v yes="$bench_met" -v no="$bench_not_met" 'BEGIN {
		if (v == "NA") { print "NA"; exit }
		ok = (op == "<=") ? v <= l : v >= l
		print ok ? yes : no }'
}

# ratio A B: A / B to two places; ratio_raw: unrounded, for verdicts (0.946 must not pass a 0.95
# target by rounding). NA when either is NA or B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "NA"; else printf "%.2f", a / b }'; }
ratio_raw() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "NA"; else printf "%.6f", a / b }'; }
