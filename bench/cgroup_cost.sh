#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# "Pods that don't opt in pay nothing": a non-opted pod's 64-byte UDP send
# rate, send path isolated (to a dummy sink device in its own netns, which
# drops everything), side by side:
#   (a) nothing attached anywhere
#   (b) another pod opted in (velo's accounting + deny list on its own cgroup)
#   (c) velo's programs on a common parent of both pods' cgroups
#   (o) the opted-in pod itself, relative to (a)
# Alternating runs (default 5 each), medians with min-max spread, ratios.
# Hard criterion first: with BPF_ENABLE_STATS (kernel.bpf_stats_enabled) on,
# velo's programs record zero runs for the non-opted pod's traffic while they
# count the opted-in pod's. Needs root and build/velo. Usage:
#   bench/cgroup_cost.sh [RUNS] [SECONDS]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
velo=${VELO_BIN:-$top/build/velo}
runs=${1:-5}
secs=${2:-3}
tag="vtb$$"
mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
parent="$mnt/velotest-$tag"
bpffs="/sys/fs/bpf/velotest-$tag"
work=$(mktemp -d /tmp/velotest-bench-XXXXXX)
stats_old=$(cat /proc/sys/kernel/bpf_stats_enabled)

[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
[ -x "$velo" ] || { echo "$velo missing: run make" >&2; exit 1; }

cleanup() {
	set +e
	sysctl -qw kernel.bpf_stats_enabled="$stats_old"
	for cg in "$parent"/*/ "$parent"; do
		[ -d "$cg" ] && [ -f "$cg/cgroup.kill" ] && echo 1 >"$cg/cgroup.kill"
	done
	sleep 0.3
	if [ -f "$work/conf" ]; then
		CNI_COMMAND=DEL CNI_CONTAINERID=vtb-opted CNI_NETNS=/run/netns/$tag-opted \
			CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni "$velo" <"$work/conf" >/dev/null 2>&1
	fi
	for p in $(bpftool -j cgroup show "$parent" 2>/dev/null | jq -r '.[] | "\(.attach_type) \(.id)"' |
		tr ' ' ':'); do
		bpftool cgroup detach "$parent" "${p%%:*}" id "${p##*:}" 2>/dev/null
	done
	for ns in plain opted node; do ip netns del "$tag-$ns" 2>/dev/null; done
	rm -rf "$bpffs" "$work"
	rmdir "$parent/plain" "$parent/opted" "$parent" 2>/dev/null
}
trap cleanup EXIT

# A pod's netns with a sink: a dummy device drops whatever it is given.
sink_netns() {
	ip netns add "$1"
	ip -n "$1" link set lo up
	ip -n "$1" link add vtsink0 type dummy
	ip -n "$1" link set vtsink0 up
	ip -n "$1" addr add 198.18.0.1/24 dev vtsink0
	ip -n "$1" neigh add 198.18.0.2 lladdr 02:00:00:00:00:02 dev vtsink0 nud permanent
}

mkdir "$parent" "$parent/plain" "$parent/opted"
sink_netns "$tag-plain"
sink_netns "$tag-opted"
ip netns add "$tag-node"

# The opted-in pod through velo itself (its veth lands in the node netns).
jq -n --arg b "$bpffs" --arg s "$work/state" --arg r "$work/run" --arg l "$work/cni.log" \
	--arg d "$work/ipam" --arg cg "/velotest-$tag/opted" '{
	cniVersion: "1.0.0", name: "velotest-bench", type: "velo", vethPrefix: "vtb",
	stateDir: $s, runDir: $r, bpffsDir: $b, logFile: $l,
	ipam: {type: "host-local", dataDir: $d, ranges: [[{subnet: "10.98.0.0/24"}]]},
	runtimeConfig: {cgroupPath: $cg, "io.kubernetes.cri.pod-annotations": {
		"velo.dev/accounting": "true", "velo.dev/egress-deny": "192.0.2.0/24"}}}' >"$work/conf"
nsenter --net="/run/netns/$tag-node" env CNI_COMMAND=ADD CNI_CONTAINERID=vtb-opted \
	CNI_NETNS="/run/netns/$tag-opted" CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni \
	CNI_ARGS="K8S_POD_UID=00000000-0000-0000-0000-00000000b0b0;IgnoreUnknown=1" \
	"$velo" <"$work/conf" >"$work/add.json"
# The sink route in the opted pod (velo's default route points at its veth).
ip -n "$tag-opted" route replace 198.18.0.0/24 dev vtsink0

# rate NETNS CGROUP: packets per second of 64-byte UDP sends for $secs seconds.
rate() {
	# shellcheck disable=SC2016 # expanded by the inner sh
	nsenter --net="/run/netns/$1" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$2" \
		python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(('198.18.0.2', 9))
payload = b'x' * 64
n = 0
end = time.perf_counter() + $secs
while time.perf_counter() < end:
    for _ in range(1000):
        s.send(payload)
    n += 1000
print(int(n / $secs))
"
}

# runs of velo's cgroup programs, summed (BPF_ENABLE_STATS must be on).
velo_runs() {
	bpftool -j prog show | jq '[.[] | select(.name | startswith("velo_cg_")) | .run_cnt // 0] | add // 0'
}
prog_costs() {
	bpftool -j prog show | jq -r '.[] | select(.name | startswith("velo_cg_")) |
		"\(.name): \(.run_cnt // 0) runs, \(if (.run_cnt // 0) > 0 then ((.run_time_ns / .run_cnt) | floor) else "-" end) ns/run"'
}

attach_parent() {
	bpftool cgroup attach "$parent" egress pinned "$bpffs/progs_v1/velo_cg_acct_eg" multi
	bpftool cgroup attach "$parent" ingress pinned "$bpffs/progs_v1/velo_cg_acct_in" multi
}
detach_parent() {
	bpftool cgroup detach "$parent" egress pinned "$bpffs/progs_v1/velo_cg_acct_eg"
	bpftool cgroup detach "$parent" ingress pinned "$bpffs/progs_v1/velo_cg_acct_in"
}

echo "== hard criterion: BPF_ENABLE_STATS, velo programs on the opted-in pod's cgroup only"
sysctl -qw kernel.bpf_stats_enabled=1
before=$(velo_runs)
plain_pps=$(rate "$tag-plain" "$parent/plain")
after=$(velo_runs)
echo "non-opted pod sent ~$((plain_pps * secs)) packets: velo programs ran $((after - before)) times"
[ $((after - before)) -eq 0 ] || { echo "FAIL: velo's programs ran for a non-opted pod"; exit 1; }
before=$(velo_runs)
opted_pps=$(rate "$tag-opted" "$parent/opted")
after=$(velo_runs)
echo "opted-in pod sent ~$((opted_pps * secs)) packets: velo programs ran $((after - before)) times"
[ $((after - before)) -gt 0 ] || { echo "FAIL: velo's programs never ran for the opted-in pod"; exit 1; }
prog_costs
sysctl -qw kernel.bpf_stats_enabled="$stats_old"


declare -a A B C O
for ((i = 0; i < runs; i++)); do
	# (b): the opted-in pod's programs stay attached to its own cgroup.
	B+=("$(rate "$tag-plain" "$parent/plain")")
	O+=("$(rate "$tag-opted" "$parent/opted")")
	attach_parent
	C+=("$(rate "$tag-plain" "$parent/plain")")
	detach_parent
	# (a): nothing attached anywhere: velo DEL, measure, ADD again.
	CNI_COMMAND=DEL CNI_CONTAINERID=vtb-opted CNI_NETNS="/run/netns/$tag-opted" CNI_IFNAME=eth0 \
		CNI_PATH=/usr/lib/cni nsenter --net="/run/netns/$tag-node" "$velo" <"$work/conf" >/dev/null
	[ -z "$(bpftool cgroup show "$parent/opted")" ] || { echo "DEL left programs"; exit 1; }
	A+=("$(rate "$tag-plain" "$parent/plain")")
	nsenter --net="/run/netns/$tag-node" env CNI_COMMAND=ADD CNI_CONTAINERID=vtb-opted \
		CNI_NETNS="/run/netns/$tag-opted" CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni \
		"$velo" <"$work/conf" >/dev/null
	ip -n "$tag-opted" route replace 198.18.0.0/24 dev vtsink0
done

# median VALUES...: prints the median and the min-max spread.
stats() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "%d %d %d\n", m, v[1], v[NR] }'; }
read -r a amin amax < <(stats "${A[@]}")
read -r b bmin bmax < <(stats "${B[@]}")
read -r c cmin cmax < <(stats "${C[@]}")
read -r o omin omax < <(stats "${O[@]}")
echo
printf '%-44s %10s %20s %8s\n' "case ($runs alternating runs, ${secs}s each)" "median pps" "spread (min-max)" "vs (a)"
printf '%-44s %10d %9d-%-10d %8s\n' "(a) nothing attached" "$a" "$amin" "$amax" "1.000"
printf '%-44s %10d %9d-%-10d %8.3f\n' "(b) another pod opted in" "$b" "$bmin" "$bmax" "$(awk -v x="$b" -v y="$a" 'BEGIN { print x / y }')"
printf '%-44s %10d %9d-%-10d %8.3f\n' "(c) velo's programs on a common parent" "$c" "$cmin" "$cmax" "$(awk -v x="$c" -v y="$a" 'BEGIN { print x / y }')"
printf '%-44s %10d %9d-%-10d %8.3f\n' "(o) the opted-in pod itself" "$o" "$omin" "$omax" "$(awk -v x="$o" -v y="$a" 'BEGIN { print x / y }')"
awk -v c="$c" -v a="$a" 'BEGIN { printf "per-packet cost of (c): %.0f ns\n", 1e9 / c - 1e9 / a }'
