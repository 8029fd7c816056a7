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

# bench_start SCRIPT PREFIX: what the pod benches (sockmap.sh, services.sh) set up alike. Sets
# cgmount (the cgroup2 mount, from mountinfo), placements, tag, node (netns PREFIX-node-PID, lo
# up), work (/tmp/PREFIX-XXXXXX, with bin/), bpffs (/sys/fs/bpf/PREFIX-PID; the scripts may
# use it or PREFIX-PID-*), pids (background processes to kill), dp_stats (bench/dp_stats.c
# built) and the trap that removes all of it, pass or fail.
bench_start() {
	bench_script=$1 bench_prefix=$2
	cgmount=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
		/proc/self/mountinfo | head -n 1)
	[ -n "$cgmount" ] || { echo "$bench_script: no cgroup2 mount" >&2; exit 1; }
	# Two placements for rr and conn: both ends on CPU 0, and client on 0, server on 1.
	placements="same cross"
	[ "$(nproc)" -ge 2 ] || placements="same"
	tag=$$
	node=$bench_prefix-node-$tag
	work=$(mktemp -d "/tmp/$bench_prefix-XXXXXX")
	bpffs=/sys/fs/bpf/$bench_prefix-$tag
	pids=()
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	dp_stats=$work/dp_stats
	# shellcheck disable=SC2046,SC2154 # the libs' words; top: the script's checkout
	${CC:-gcc} -std=gnu11 -O2 -D_GNU_SOURCE -Wall -Wextra -Werror -o "$dp_stats" \
		"$top/bench/dp_stats.c" $(pkg-config --libs libbpf)
	ip netns add "$node"
	ip -n "$node" link set lo up
	mkdir -p "$work/bin"
}

bench_cleanup() {
	set +e
	local pid ns cg
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
	for cg in "$cgmount/$bench_prefix-$tag"-*; do
		[ -d "$cg" ] && cgroup_kill "$cg"
	done
	for cg in "$cgmount/$bench_prefix-$tag"-*; do [ -d "$cg" ] && rmdir "$cg"; done
	for ns in $(ip netns list | awk '{ print $1 }' | grep -- "^$bench_prefix-.*-$tag\$"); do
		ip netns del "$ns"
	done
	rm -rf "$bpffs" "$bpffs"-* "$work"
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

# median_min_max: "median min max" of the numbers on stdin, one a line ("NA NA NA" for none).
median_min_max() {
	sort -g | awk '{ v[NR] = $1 }
	END {
		if (!NR) { print "NA NA NA"; exit }
		printf "%g %g %g\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR]
	}'
}

# ratio A B: A / B to two places; ratio_raw: unrounded, for verdicts (0.946 must not pass a 0.95
# target by rounding). NA when either is NA or B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "NA"; else printf "%.2f", a / b }'; }
ratio_raw() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "NA"; else printf "%.6f", a / b }'; }
