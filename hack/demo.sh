#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# velo's main job on one machine: a "node" (its own network namespace, forwarding
# off until velo turns it on per device) with pairs of pods wired by velo through
# the CNI protocol - routed, tc fast path, XDP fast path, sockmap - traffic through
# each checked by digest, throughput measured side by side (rounds that alternate
# the paths: median and min-max; VELO_DEMO_ROUNDS, 3), what velo's BPF
# programs cost (veloctl top), a second node on an underlay bridge with velod
# keeping host-gw routes between the two (a pod on each side, traffic checked),
# a ClusterIP Service with a backend on each node (connect-time translation, and a
# translated connection paired in the sockhash), and DEL leaving nothing behind
# (with velod deleting the retired veths).
# Everything it creates is named velodemo-* and removed at exit.
# Usage (as root): hack/demo.sh [--no-deps]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

if [ "${1:-}" != "--no-deps" ]; then
	hack/install-deps.sh >/tmp/velodemo-deps.log 2>&1 || { cat /tmp/velodemo-deps.log; exit 1; }
fi
make -s -j"$(nproc)" all

work=$(mktemp -d /tmp/velodemo.XXXXXX)
node=velodemo-node-$$
cgmount=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
	/proc/self/mountinfo | head -n1)
node2=velodemo-node2-$$ underlay=velodemo-ul-$$
pods=() cgroups=() velods=()
cleanup() {
	set +e
	for pid in "${velods[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
	disown -a # the pods' servers die by cgroup.kill below: no job reports for them
	pkill -f "iperf3 -s -1 -B 10.7[78]." 2>/dev/null
	for pod in "${pods[@]}"; do ip netns del "$pod" 2>/dev/null; done
	# As a runtime does: cgroup.kill, then the cgroup is empty once the kernel says so.
	for cg in "${cgroups[@]}"; do
		echo 1 >"$cg/cgroup.kill" 2>/dev/null
		for _ in $(seq 50); do [ -z "$(cat "$cg/cgroup.procs" 2>/dev/null)" ] && break; sleep 0.1; done
		rmdir "$cg" 2>/dev/null
	done
	ip netns del "$node" 2>/dev/null
	ip netns del "$node2" 2>/dev/null
	ip netns del "$underlay" 2>/dev/null
	mountpoint -q "$work/bpffs" && umount "$work/bpffs"
	rm -rf "$work"
}
trap cleanup EXIT

bin=$work/bin
mkdir -p "$bin" "$work/bpffs"
cp build/velo /usr/lib/cni/host-local "$bin/"
# velo mounts bpffs itself where none is; a private one keeps the demo's pins apart.
mount -t bpf bpf "$work/bpffs"

ip netns add "$node"
in_node() { nsenter --net="/run/netns/$node" "$@"; }
in_node ip link set lo up
in_node ip addr add 10.77.255.1/32 dev lo # the node's own address
for key in net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv4.conf.default.forwarding \
	net.ipv6.conf.all.forwarding; do
	in_node sysctl -qw "$key=0"
done

# This kernel's sockhash bugs, which velo's probes find (docs/sockmap.md): velo keeps sockmap
# pods routed unless the conflist accepts them by name. The demo accepts them, as an operator
# whose pods don't use those patterns may, to show the short-circuit.
accept_bugs='["halfclose-eagain", "splice-ingress", "waitall-short", "rcvlowat-ignored"]'

# config ANNOTATIONS_JSON CGROUP [2]: the conflist entry with the pod's runtimeConfig; with
# "2", node 2's (its own state, locks, pins, log and pod CIDRs 10.78.0.0/24, fd78::/120).
config() {
	jq -cn --arg w "$work${3:+/n2}" --argjson a "$1" --arg cg "$2" --arg n "${3:+8}" \
		--argjson bugs "$accept_bugs" '{
		cniVersion: "1.0.0", name: "velodemo", type: "velo", vethPrefix: "vd",
		stateDir: "\($w)/state", runDir: "\($w)/run",
		bpffsDir: (if $n == "" then "\($w)/bpffs/velo" else "\($w | rtrimstr("/n2"))/bpffs/velo2" end),
		logFile: "\($w)/cni.log",
		sockmapAcceptKernelBugs: $bugs,
		ipam: {type: "host-local", dataDir: "\($w)/ipam",
		       ranges: [[{subnet: "10.7\(if $n == "" then "7" else $n end).0.0/24"}],
		                [{subnet: "fd7\(if $n == "" then "7" else $n end)::/120"}]]},
		runtimeConfig: ({"io.kubernetes.cri.pod-annotations": $a} +
		                (if $cg == "" then {} else {cgroupPath: $cg} end))}'
}

declare -A ip4 ip6 cg conf
# pod NAME ANNOTATIONS [2]: a netns and a cgroup of its own, wired by velo's ADD (on node 2
# with "2").
pod() {
	local name=$1 annotations=$2 on=${3:-} ns=velodemo-$1-$$ rel="" start end result
	local nodens=$node
	ip netns add "$ns"
	pods+=("$ns")
	ip -n "$ns" link set lo up
	if [ -n "$cgmount" ]; then
		rel=/velodemo-$name-$$
		mkdir "$cgmount$rel"
		cgroups+=("$cgmount$rel")
		cg[$name]=$cgmount$rel
	fi
	conf[$name]=$(config "$annotations" "$rel" "$on")
	[ -z "$on" ] || nodens=$node2
	start=$(date +%s%N)
	result=$(printf '%s' "${conf[$name]}" | nsenter --net="/run/netns/$nodens" env CNI_COMMAND=ADD \
		CNI_CONTAINERID="velodemo-$name" CNI_NETNS="/run/netns/$ns" CNI_IFNAME=eth0 \
		CNI_ARGS="K8S_POD_NAMESPACE=demo;K8S_POD_NAME=$name" CNI_PATH="$bin" "$bin/velo")
	end=$(date +%s%N)
	ip4[$name]=$(jq -r '.ips[].address | select(contains("."))' <<<"$result" | cut -d/ -f1)
	ip6[$name]=$(jq -r '.ips[].address | select(contains(":"))' <<<"$result" | cut -d/ -f1)
	printf '  %-4s %-10s %-10s %s  ADD %3d ms  %s\n' "$name" "${ip4[$name]}" "${ip6[$name]}" \
		"$(jq -r '.interfaces[0].name' <<<"$result")" $(((end - start) / 1000000)) "$annotations"
}

# pod_exec NAME CMD...: the shell becomes CMD, in the pod's netns, as a process of the pod's
# cgroup. A server started as `pod_exec ... &` is then the job itself: when cleanup's
# cgroup.kill ends it, no subshell is left waiting for it to print "Killed".
pod_exec() {
	local name=$1
	shift
	# shellcheck disable=SC2016
	exec nsenter --net="/run/netns/velodemo-$name-$$" sh -c \
		'[ -z "$1" ] || echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "${cg[$name]:-}" "$@"
}
# in_pod NAME CMD...: CMD in the pod, as pod_exec, for the shell to wait for.
in_pod() { (pod_exec "$@"); }

echo "Pods wired by velo (node namespace $node, forwarding sysctls 0 at start):"
pod r1 '{}'
pod r2 '{}'
pod t1 '{"velo.dev/fastpath":"tc"}'
pod t2 '{"velo.dev/fastpath":"tc"}'
pod x1 '{"velo.dev/fastpath":"xdp"}'
pod x2 '{"velo.dev/fastpath":"xdp"}'
echo "  (s1, s2: the sockhash kernel bugs velo probed for are accepted by name: $accept_bugs)"
pod s1 '{"velo.dev/sockmap":"true"}'
pod s2 '{"velo.dev/sockmap":"true"}'

echo
echo "Connectivity:"
printf '  node -> pod r1: %s\n' "$(in_node ping -c1 -W2 "${ip4[r1]}" | grep -o 'time=.*')"
printf '  pod r1 -> pod t1 (IPv6): %s\n' "$(in_pod r1 ping -6 -c1 -W2 "${ip6[t1]}" | grep -o 'time=.*')"

head -c 16777216 /dev/urandom >"$work/payload"
want=$(sha256sum <"$work/payload" | cut -d' ' -f1)
# transfer FROM TO: 16 MiB over TCP, checked by digest.
transfer() {
	pod_exec "$2" socat -u TCP4-LISTEN:5001,reuseaddr OPEN:"$work/received",creat,trunc &
	local listener=$! got
	sleep 0.3
	in_pod "$1" socat -u OPEN:"$work/payload" TCP4:"${ip4[$2]}":5001
	wait "$listener"
	got=$(sha256sum <"$work/received" | cut -d' ' -f1)
	[ "$want" = "$got" ] || { echo "  $1 -> $2: DIGEST MISMATCH" >&2; exit 1; }
}

# iperf FROM TO LEN: one TCP stream of $secs seconds, Gbit/s received.
iperf() {
	pod_exec "$2" iperf3 -s -1 -B "${ip4[$2]}" >/dev/null 2>&1 &
	local server=$!
	sleep 0.3
	in_pod "$1" iperf3 -c "${ip4[$2]}" -t "$secs" -l "$3" -J | jq '.end.sum_received.bits_per_second / 1e9'
	wait "$server"
}

# One stream says little on a shared machine: each path is measured in every round, the paths
# alternating (in an order rotated per round) so that the machine's drift hits them alike, and
# shown as median (min-max). A path differs from routed only where the two spreads don't overlap.
rounds=${VELO_DEMO_ROUNDS:-3} secs=${VELO_DEMO_SECONDS:-2}
paths=(r t x s)
declare -A label=([r]=routed [t]="tc fast path" [x]="XDP fast path" [s]=sockmap) gbps
echo
echo "Throughput, one TCP stream (iperf3), 16 MiB digest-checked first; $rounds rounds of $secs s"
echo "per path and write size, the paths alternating within each round; median (min-max):"
for pair in "${paths[@]}"; do transfer "${pair}1" "${pair}2"; done
for round in $(seq "$rounds"); do
	for i in "${!paths[@]}"; do
		pair=${paths[$(((i + round - 1) % ${#paths[@]}))]}
		for len in 128K 1K; do
			gbps[$pair-$len]+=" $(iperf "${pair}1" "${pair}2" "$len")"
		done
	done
done
# stats VALUES...: "median min max".
stats() {
	printf '%s\n' "$@" | sort -g |
		awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			print m, v[1], v[NR] }'
}
# versus PAIR LEN: PAIR's median over routed's, and where the spreads part ("~": they overlap).
versus() {
	local med lo hi rmed rlo rhi
	# shellcheck disable=SC2086 # the samples, one word each
	read -r med lo hi < <(stats ${gbps[$1-$2]})
	# shellcheck disable=SC2086
	read -r rmed rlo rhi < <(stats ${gbps[r-$2]})
	awk -v m="$med" -v lo="$lo" -v hi="$hi" -v rm="$rmed" -v rlo="$rlo" -v rhi="$rhi" 'BEGIN {
		v = lo > rhi ? "faster" : hi < rlo ? "slower" : "~"
		printf "%.2fx %s", m / rm, v }'
}
printf '  %-14s %22s %22s   %s\n' path "128K writes, Gb/s" "1K writes, Gb/s" "vs routed (128K / 1K)"
for pair in "${paths[@]}"; do
	cells=()
	for len in 128K 1K; do
		# shellcheck disable=SC2086
		cells+=("$(stats ${gbps[$pair-$len]} | awk '{ printf "%.2f (%.2f-%.2f)", $1, $2, $3 }')")
	done
	vs=
	[ "$pair" = r ] || vs="$(versus "$pair" 128K) / $(versus "$pair" 1K)"
	printf '  %-14s %22s %22s%s\n' "${label[$pair]}" "${cells[0]}" "${cells[1]}" "${vs:+   $vs}"
done
echo "  (~: the spreads overlap, so this run shows no difference from routed)"

echo
echo "What velo's BPF programs cost while tc pods talk (veloctl top, BPF_ENABLE_STATS for 2 s):"
pod_exec t2 iperf3 -s -1 -B "${ip4[t2]}" >/dev/null 2>&1 &
sleep 0.3
pod_exec t1 iperf3 -c "${ip4[t2]}" -t 3 -l 1K >/dev/null &
sleep 0.5
build/veloctl --bpffs "$work/bpffs/velo" --state-dir "$work/state" top -i 2 -n 1 | sed 's/^/  /'
wait

echo
echo "A second node: namespace $node2 on an underlay bridge with node 1 (192.168.78.0/24);"
echo "velod on each keeps host-gw routes to the other's pod CIDRs from a node list:"
ip netns add "$underlay"
ip -n "$underlay" link add br0 type bridge
ip -n "$underlay" link set br0 up
ip netns add "$node2"
for n in 1 2; do
	ns=$node
	[ "$n" = 1 ] || ns=$node2
	ip link add "vdul$n" netns "$underlay" type veth peer name ul0 netns "$ns"
	ip -n "$underlay" link set "vdul$n" master br0 up
	ip -n "$ns" link set lo up
	ip -n "$ns" addr add "192.168.78.$n/24" dev ul0
	ip -n "$ns" addr add "fd00:78::$n/64" dev ul0 nodad
	ip -n "$ns" link set ul0 up
done
for key in net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv6.conf.all.forwarding; do
	nsenter --net="/run/netns/$node2" sysctl -qw "$key=0"
done
mkdir -p "$work/n2"
jq -n '{nodes: [
	{name: "node1", addresses: ["192.168.78.1", "fd00:78::1"], podCIDRs: ["10.77.0.0/24", "fd77::/120"]},
	{name: "node2", addresses: ["192.168.78.2", "fd00:78::2"], podCIDRs: ["10.78.0.0/24", "fd78::/120"]}]}' \
	>"$work/nodes.json"
for n in 1 2; do
	ns=$node dir=$work bpffs=$work/bpffs/velo
	[ "$n" = 1 ] || { ns=$node2 dir=$work/n2 bpffs=$work/bpffs/velo2; }
	jq -n --arg d "$dir" --arg b "$bpffs" --arg f "$work/nodes.json" --arg n "node$n" --arg c "$bin" \
		'{stateDir: ($d + "/state"), runDir: ($d + "/run"), bpffsDir: $b, cniPath: $c,
		  listen: "127.0.0.1:9099", sampleIntervalSeconds: 0, nodeName: $n, nodesFile: $f,
		  routeSyncSeconds: 1, sourceGuardPrefix: "vd"}' >"$dir/velod.json"
	# Node 1's velod also keeps the Service maps, from a file here (from the API in a cluster).
	if [ "$n" = 1 ]; then
		echo '{"services": [], "endpointSlices": []}' >"$work/services.json"
		jq --arg f "$work/services.json" '.servicesFile = $f | .servicesSyncMs = 100' \
			"$dir/velod.json" >"$dir/velod.json.tmp" && mv "$dir/velod.json.tmp" "$dir/velod.json"
	fi
	nsenter --net="/run/netns/$ns" build/velod --config "$dir/velod.json" 2>>"$dir/velod.log" &
	velods+=($!)
done
for _ in $(seq 50); do
	in_node ip route show proto 118 | grep -q '^10.78.0.0/24 via' && break
	sleep 0.1
done
{ in_node ip -4 route show proto 118; in_node ip -6 route show proto 118; } | grep ' via ' |
	sed 's/^/  node 1: /'
pod c1 '{}' 2
printf '  pod r1 (node 1) -> pod c1 (node 2): %s\n' \
	"$(in_pod r1 ping -c1 -W2 "${ip4[c1]}" | grep -o 'time=.*')"
transfer r1 c1
printf '  16 MiB r1 -> c1 digest-checked; one TCP stream across the nodes: %.2f Gb/s (128K writes)\n' \
	"$(iperf r1 c1 128K)"
printf '  velod on node 1: velo_hostgw_routes %s\n' \
	"$(in_node curl -sf http://127.0.0.1:9099/metrics | awk '$1 == "velo_hostgw_routes" { print $2 }')"

echo
echo "A ClusterIP Service with a backend on each node: pod v1 (velo.dev/services) dials"
echo "10.96.0.10:80 and velo's connect program picks a backend at connect(); no kube-proxy here:"
pod b1 '{"velo.dev/sockmap":"true"}'
pod v1 '{"velo.dev/services":"true","velo.dev/sockmap":"true"}'
# slice NAME PORT IP NODE...: an EndpointSlice of service NAME, one ready endpoint per IP NODE.
slice() {
	local name=$1 port=$2
	shift 2
	jq -cn --arg s "$name" --argjson p "$port" --args '{metadata: {name: "\($s)-slice", namespace: "demo",
		labels: {"kubernetes.io/service-name": $s}}, addressType: "IPv4",
		ports: [{name: "", protocol: "TCP", port: $p}],
		endpoints: [$ARGS.positional | _nwise(2) | {addresses: [.[0]], conditions: {ready: true},
		            nodeName: .[1]}]}' "$@"
}
# web: b1 (node 1) and c1 (node 2); near: b1 only, to show a translated connection in the sockhash.
jq -n --argjson web "$(slice web 8080 "${ip4[b1]}" node1 "${ip4[c1]}" node2)" \
	--argjson near "$(slice near 5001 "${ip4[b1]}" node1)" '{
	services: [{metadata: {name: "web", namespace: "demo"},
	            spec: {clusterIPs: ["10.96.0.10"], ports: [{name: "", protocol: "TCP", port: 80}]}},
	           {metadata: {name: "near", namespace: "demo"},
	            spec: {clusterIPs: ["10.96.0.11"], ports: [{name: "", protocol: "TCP", port: 80}]}}],
	endpointSlices: [$web, $near]}' >"$work/services.json.tmp"
mv "$work/services.json.tmp" "$work/services.json"
for _ in $(seq 100); do
	grep -q 'services: 2 service ports' "$work/velod.log" 2>/dev/null && break
	sleep 0.1
done
pod_exec b1 socat TCP4-LISTEN:8080,fork,reuseaddr SYSTEM:'echo b1' &
pod_exec c1 socat TCP4-LISTEN:8080,fork,reuseaddr SYSTEM:'echo c1' &
sleep 0.3
declare -A served=([b1]=0 [c1]=0)
for _ in $(seq 20); do
	who=$(in_pod v1 socat -T2 - TCP4:10.96.0.10:80 </dev/null || true)
	case $who in b1 | c1) served[$who]=$((served[$who] + 1)) ;; esac
done
printf '  20 connects: %d answered by b1 (node 1), %d by c1 (node 2, over the host-gw route)\n' \
	"${served[b1]}" "${served[c1]}"
if [ $((served[b1] + served[c1])) -ne 20 ] || [ "${served[b1]}" -eq 0 ] || [ "${served[c1]}" -eq 0 ]; then
	echo "  the Service did not reach both backends on every connect" >&2
	exit 1
fi
build/veloctl --state-dir "$work/state" --run-dir "$work/run" --bpffs "$work/bpffs/velo" services |
	sed 's/^/  /'
# pod -> Service -> pod in the sockhash: 16 MiB v1 -> 10.96.0.11:80 (b1), digest-checked.
pod_exec b1 socat -u TCP4-LISTEN:5001,reuseaddr OPEN:"$work/received",creat,trunc &
listener=$!
sleep 0.3
# The connection idles for a second first, for veloctl to see it.
pod_exec v1 sh -c "{ sleep 1; cat '$work/payload'; } | socat -u - TCP4:10.96.0.11:80" &
idle=$!
for _ in $(seq 20); do
	sockets=$(build/veloctl --state-dir "$work/state" --run-dir "$work/run" --bpffs "$work/bpffs/velo" \
		sockets 2>/dev/null | grep '10.96.0.11' || true)
	[ -n "$sockets" ] && break
	sleep 0.05
done
wait "$idle"
wait "$listener"
[ "$(sha256sum <"$work/received" | cut -d' ' -f1)" = "$want" ] ||
	{ echo "  v1 -> 10.96.0.11: DIGEST MISMATCH" >&2; exit 1; }
echo "  16 MiB v1 -> 10.96.0.11:80 (backend b1, this node) digest-checked; in the sockhash:"
[ -n "$sockets" ] || { echo "    none: the translated connection was not in the sockhash" >&2; exit 1; }
while IFS= read -r line; do echo "    $line"; done <<<"$sockets"

echo
echo "Endpoints (veloctl endpoints):"
build/veloctl --state-dir "$work/state" --run-dir "$work/run" --bpffs "$work/bpffs/velo" endpoints |
	sed 's/^/  /'

echo
start=$(date +%s%N)
for name in r1 r2 t1 t2 x1 x2 s1 s2 b1 v1; do
	printf '%s' "${conf[$name]}" | in_node env CNI_COMMAND=DEL CNI_CONTAINERID="velodemo-$name" \
		CNI_NETNS="/run/netns/velodemo-$name-$$" CNI_IFNAME=eth0 CNI_PATH="$bin" "$bin/velo"
done
end=$(date +%s%N)
printf '%s' "${conf[c1]}" | nsenter --net="/run/netns/$node2" env CNI_COMMAND=DEL \
	CNI_CONTAINERID=velodemo-c1 CNI_NETNS="/run/netns/velodemo-c1-$$" CNI_IFNAME=eth0 \
	CNI_PATH="$bin" "$bin/velo"
echo "DEL of node 1's 10 pods: $(((end - start) / 10000000)) ms each (velod deletes the retired veths)"
# velo veths left in both nodes.
velo_links() {
	{ in_node ip -o link show; nsenter --net="/run/netns/$node2" ip -o link show; } |
		grep -c ' vd' || true
}
# velod's reaper runs every 100 ms; its group delete waits for RCU, longer on a busy machine.
for _ in $(seq 100); do
	[ "$(velo_links)" = 0 ] && break
	sleep 0.1
done
links=$(velo_links)
leases=$(find "$work/ipam" "$work/n2/ipam" -type f -name '10.*' | wc -l)
# The node-wide sk_msg link stays with velo's maps; per-pod links are named after the veth.
pins=$({ find "$work/bpffs/velo/links" "$work/bpffs/velo2/links" -name 'vd*' 2>/dev/null || true; } |
	wc -l)
records=$(find "$work/state" "$work/n2/state" -name '*.json' | wc -l)
echo "After DEL of all 11 pods: $links velo veths, $leases IPAM leases, $records records," \
	"$pins per-pod link pins left."
[ $((links + leases + records + pins)) -eq 0 ]
