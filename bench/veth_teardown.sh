#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What it costs a DEL to get a pod's host veth out of the node, per way (bench/veth_teardown.c):
# delete it, retire it (down + velo's retired group: what velo does), down + rename, move it into
# a fresh process-less netns, move it into one shared graveyard netns. Per way, PODS pods: network
# namespaces velobench-td-PID-WAY-N wired to a node namespace velobench-td-node-PID by a veth with
# a /32 route and a neighbour entry. After each way: whether routes, neighbours and the pod names
# are gone from the node at once, and how long until every pod's eth0 is gone (polled). No
# traffic is sent. Everything is removed at exit, pass or fail.
#
# Usage (as root): bench/veth_teardown.sh [-o OUTDIR] [-n PODS]
#   -o OUTDIR  results: veth_teardown.md, veth_teardown.csv (build/bench)
#   -n PODS    links per way (20)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

outdir=$top/build/bench
pods=20
while getopts "o:n:h" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	n) pods=$OPTARG ;;
	*) sed -n 's/^# \{0,1\}//; 11,13p' "$0" >&2; exit 2 ;;
	esac
done
if ! [[ $pods =~ ^[1-9][0-9]*$ ]] || ((pods > 200)); then echo "-n is 1..200" >&2; exit 2; fi
[ "$(id -u)" = 0 ] || { echo "veth_teardown: needs root (network namespaces)" >&2; exit 1; }

work=$(mktemp -d /tmp/velobench-td-XXXXXX)
node=velobench-td-node-$$
prefix=velobench-td-$$
cleanup() {
	local ns
	for ns in $(ip netns list | awk '{print $1}' | grep -E "^($prefix-|$node\$)"); do
		ip netns del "$ns" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

driver=$work/veth_teardown
${CC:-gcc} -std=gnu11 -O2 -D_GNU_SOURCE -Wall -Wextra -Werror -o "$driver" "$top/bench/veth_teardown.c"
mkdir -p "$outdir"
ip netns add "$node"
ip -n "$node" link set lo up
# Anything to 10.249/16 that lost its route stays in the node.
ip -n "$node" route add blackhole 10.249.0.0/16

ways=(delete retire rename netns-fresh netns-shared)
csv=$outdir/veth_teardown.csv
echo "way,link,usec" >"$csv"
declare -A summary
w=0
for way in "${ways[@]}"; do
	w=$((w + 1))
	links=()
	for i in $(seq "$pods"); do
		pod=$prefix-$way-$i
		link=vbtd$w-$i
		addr=10.249.$w.$i
		ip netns add "$pod"
		ip -n "$node" link add "$link" type veth peer name eth0 netns "$pod"
		ip -n "$node" link set "$link" up
		ip -n "$pod" link set eth0 up
		ip -n "$pod" addr add "$addr/32" dev eth0
		ip -n "$node" route add "$addr/32" dev "$link"
		ip -n "$node" neigh add "$addr" lladdr 02:00:00:00:00:01 dev "$link"
		links+=("$link")
	done
	nsenter --net="/run/netns/$node" "$driver" "$way" "${links[@]}" >"$work/$way.out"
	start=$(date +%s%N)
	names=$(ip -n "$node" -o link show | grep -c "vbtd$w-" || true)
	routes=$(ip -n "$node" route show | grep -c "^10\.249\.$w\." || true)
	neigh=$(ip -n "$node" neigh show | grep -c "^10\.249\.$w\." || true)
	left=0
	# retire and rename delete nothing: their pairs stay until velod, the child or this exit.
	[[ $way == retire || $way == rename ]] && left=-1
	for i in $(seq "$pods"); do
		((left >= 0)) || break
		for _ in $(seq 500); do
			ip -n "$prefix-$way-$i" link show eth0 >/dev/null 2>&1 || break
			sleep 0.01
		done
		! ip -n "$prefix-$way-$i" link show eth0 >/dev/null 2>&1 || left=$((left + 1))
	done
	gone_ms=$((($(date +%s%N) - start) / 1000000))
	awk -v w="$way" '{print w "," $2 "," $3}' "$work/$way.out" >>"$csv"
	stats=$(awk '{print $3}' "$work/$way.out" | sort -n | awk '
		{ v[NR] = $1 }
		END { printf "%.2f | %.2f | %.2f", v[1] / 1000, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000 }')
	if ((left < 0)); then
		gone="not deleted here"
	elif ((left)); then
		gone="$left eth0 left after 5 s each"
	else
		gone="all within $gone_ms ms"
	fi
	summary[$way]="| $way | $stats | $names | $routes | $neigh | $gone |"
done

md=$outdir/veth_teardown.md
{
	echo "# Getting a pod's host veth out of the node, per way"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs; $pods links per way," \
		"one driver process per way, one request per step (bench/veth_teardown.c)."
	echo
	echo "| way | min ms | median ms | max ms | pod names left on the node | routes left | neighbours left | pods' eth0 gone (polled, from the end of the way) |"
	echo "|---|---|---|---|---|---|---|---|"
	for way in "${ways[@]}"; do echo "${summary[$way]}"; done
	echo
	echo "retire leaves the links (down, group 0x76656c6f) for velod or velo's forked child to"
	echo "delete; this bench deletes them with the node namespace, so their eth0 stays until then."
} >"$md"
cat "$md"
echo "veth_teardown: results in $md, $csv"
