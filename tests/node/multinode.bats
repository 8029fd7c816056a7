#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A cluster of two nodes on one machine: each node a network namespace with its own velo
# paths (state, locks, bpffs, log) and its own velod, joined by an underlay bridge in a
# third namespace. velod keeps host-gw routes to the other node's pod CIDRs from a static
# node list. Traffic stays inside these namespaces: the nodes have no default route.

load lib

setup_file() { vt_setup_file; }
teardown_file() { vt_teardown_file; }
setup() {
	vt_setup
	vt_velo_only
	command -v bpftool >/dev/null 2>&1 || skip "bpftool not installed"
	MN_VELOD="${VELOD_BIN:-$VELOTEST_REPO/build/velod}"
	[ -x "$MN_VELOD" ] || skip "velod not built (make)"
	MN_BPFFS="/sys/fs/bpf/velotest-mn-$VT_TAG-$BATS_TEST_NUMBER"
}
teardown() {
	local i
	for i in 1 2; do ip netns del "velotest-mn-n$i-$VT_TAG" 2>/dev/null || true; done
	ip netns del "velotest-mn-out-$VT_TAG" 2>/dev/null || true
	ip netns del "velotest-mn-ul-$VT_TAG" 2>/dev/null || true
	vt_teardown
	rm -rf "$MN_BPFFS"-n1 "$MN_BPFFS"-n2
	return 0
}

mn_node() { echo "velotest-mn-n$1-$VT_TAG"; }
mn_in() {
	local i="$1"
	shift
	nsenter --net="/run/netns/$(mn_node "$i")" "$@"
}

# mn_underlay: nodes 1 and 2 on a bridge, 192.168.77.N/24 and fd00:77::N/64, forwarding off,
# and a host outside the cluster on it (MN_OUT: .100 and ::100).
mn_underlay() {
	local ul="velotest-mn-ul-$VT_TAG" i
	ip netns add "$ul"
	ip -n "$ul" link add br0 type bridge
	ip -n "$ul" link set br0 up
	MN_OUT="velotest-mn-out-$VT_TAG"
	ip netns add "$MN_OUT"
	ip link add vtmnuo netns "$ul" type veth peer name ul0 netns "$MN_OUT"
	ip -n "$ul" link set vtmnuo master br0 up
	ip -n "$MN_OUT" link set lo up
	ip -n "$MN_OUT" addr add 192.168.77.100/24 dev ul0
	ip -n "$MN_OUT" addr add fd00:77::100/64 dev ul0 nodad
	ip -n "$MN_OUT" link set ul0 up
	for i in 1 2; do
		ip netns add "$(mn_node "$i")"
		ip link add "vtmnu$i" netns "$ul" type veth peer name ul0 netns "$(mn_node "$i")"
		ip -n "$ul" link set "vtmnu$i" master br0 up
		ip -n "$(mn_node "$i")" link set lo up
		ip -n "$(mn_node "$i")" addr add "192.168.77.$i/24" dev ul0
		ip -n "$(mn_node "$i")" addr add "fd00:77::$i/64" dev ul0 nodad
		ip -n "$(mn_node "$i")" link set ul0 up
		mn_in "$i" sysctl -qw net.ipv4.ip_forward=0 net.ipv4.conf.all.forwarding=0 \
			net.ipv6.conf.all.forwarding=0
	done
}

# mn_nodes [2]: the node list; with "2", node 2 is in it.
mn_nodes() {
	jq -n --arg two "${1:-}" '{nodes: ([
		{name: "n1", addresses: ["192.168.77.1", "fd00:77::1"],
		 podCIDRs: ["10.77.1.0/24", "fd77:1::/64"]}] +
		(if $two == "2" then [{name: "n2", addresses: ["192.168.77.2", "fd00:77::2"],
		 podCIDRs: ["10.77.2.0/24", "fd77:2::/64"]}] else [] end) +
		[{name: "n3", addresses: ["203.0.113.9"], podCIDRs: ["10.77.1.0/25", "10.77.3.0/24"]}])}' \
		>"$VT/nodes.json.new"
	mv "$VT/nodes.json.new" "$VT/nodes.json"
}

# mn_config N [ANNOTATIONS_JSON]: velo's config on node N.
mn_config() {
	jq -cn --arg t "$VT/n$1" --arg b "$MN_BPFFS-n$1" --arg n "$1" --argjson a "${2:-{\}}" '{
		cniVersion: "1.0.0", name: "velotest-mn", type: "velo", vethPrefix: "vm",
		stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: $b,
		logFile: ($t + "/cni.log"),
		ipam: {type: "host-local", dataDir: ($t + "/ipam"),
			ranges: [[{subnet: ("10.77." + $n + ".0/24")}], [{subnet: ("fd77:" + $n + "::/64")}]]},
		runtimeConfig: {"io.kubernetes.cri.pod-annotations": $a}}'
}

# mn_velod N: velod on node N with the node list, syncing every second.
mn_velod() {
	jq -n --arg t "$VT/n$1" --arg b "$MN_BPFFS-n$1" --arg bin "$VT_BIN" --arg f "$VT/nodes.json" \
		--arg n "n$1" '{stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: $b,
		cniPath: $bin, listen: "127.0.0.1:19299", reconcileIntervalSeconds: 0,
		sampleIntervalSeconds: 0, nodeName: $n, nodesFile: $f, routeSyncSeconds: 1,
		masquerade: true, clusterCIDRs: ["10.96.0.0/12"], sourceGuardPrefix: "vm"}' \
		>"$VT/n$1/velod.json"
	# nsenter execs velod, so $! is velod itself.
	nsenter --net="/run/netns/$(mn_node "$1")" "$MN_VELOD" --config "$VT/n$1/velod.json" \
		2>>"$VT/n$1/velod.log" &
	VT_PIDS+=($!)
}

# mn_add N CID [ANNOTATIONS_JSON]: a pod on node N; sets MN_POD, MN_IP4, MN_IP6.
mn_add() {
	local out
	MN_POD="$(vt_pod_new)"
	out="$(mn_in "$1" env -i PATH="$PATH" CNI_COMMAND=ADD CNI_CONTAINERID="$2" \
		CNI_NETNS="/run/netns/$MN_POD" CNI_IFNAME=eth0 CNI_PATH="$VT_BIN" \
		"$VT_BIN/velo" <<<"$(mn_config "$1" "${3:-}")")" || { echo "ADD $2: $out"; return 1; }
	MN_IP4="$(vt_ip "$out" 4)"
	MN_IP6="$(vt_ip "$out" 6)"
}

# mn_peer NETNS ADDR CLIENT_POD: the source address a TCP server in NETNS on ADDR sees when
# CLIENT_POD connects to it.
mn_peer() {
	local port=$((30000 + RANDOM % 10000)) pid
	nsenter --net="/run/netns/$1" timeout 10 python3 -c '
import socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1)
c, peer = s.accept(); print(peer[0])
' "$2" "$port" >"$VT/work/peer" 2>&1 &
	pid=$!
	sleep 0.4
	vt_pod "$3" timeout 5 python3 -c '
import socket, sys
socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3).close()
' "$2" "$port" || { echo "connect to $2 failed"; return 1; }
	wait "$pid"
	cat "$VT/work/peer"
}

# mn_wait_route N PATTERN [absent]: waits up to 5 s for node N's velo routes to (not) match.
mn_wait_route() {
	local i
	for i in $(seq 50); do
		if mn_in "$1" ip route show proto 118 table all | grep -q "$2"; then
			[ "${3:-}" != absent ] && return 0
		else
			[ "${3:-}" = absent ] && return 0
		fi
		sleep 0.1
	done
	echo "node $1 routes (proto 118):"
	mn_in "$1" ip route show proto 118 table all
	return 1
}

@test "two nodes: host-gw routes from the node list, pods talk across nodes (IPv4, IPv6), traffic leaving the cluster is masqueraded, a spoofed IPv6 source is dropped, a removed node's routes go" {
	local a1 a1_4 a1_6 b1 b1_4 b1_6 a2 a2_4 a2_6 tc_before tc_after
	mkdir -p "$VT/n1" "$VT/n2"
	mn_underlay
	mn_nodes 2
	mn_velod 1
	mn_velod 2
	mn_wait_route 1 "^10.77.2.0/24 via 192.168.77.2 dev ul0"
	mn_wait_route 1 "^fd77:2::/64 via fd00:77::2 dev ul0"
	mn_wait_route 2 "^10.77.1.0/24 via 192.168.77.1 dev ul0"

	# Node 3 claims part of node 1's CIDR, and its next hop isn't on any local link.
	if mn_in 1 ip route show proto 118 | grep -q "10.77.1.0/25\|10.77.3.0"; then
		echo "node 1 routed what it must not:"
		mn_in 1 ip route show proto 118
		false
	fi
	grep -q "which is this node's: not routed" "$VT/n1/velod.log"
	grep -q "10.77.3.0/24 via 203.0.113.9 (node n3): next hop not on a local link" "$VT/n1/velod.log"
	[ "$(mn_in 1 curl -sf http://127.0.0.1:19299/metrics | awk '$1 == "velo_hostgw_routes" {print $2}')" = 2 ]

	mn_add 1 mn-a1 '{"velo.dev/fastpath": "tc"}'
	a1="$MN_POD" a1_4="$MN_IP4" a1_6="$MN_IP6"
	mn_add 1 mn-b1 '{"velo.dev/fastpath": "tc"}'
	b1="$MN_POD" b1_4="$MN_IP4" b1_6="$MN_IP6"
	mn_add 2 mn-a2
	a2="$MN_POD" a2_4="$MN_IP4" a2_6="$MN_IP6"
	[[ $a1_4 == 10.77.1.* ]] && [[ $a2_4 == 10.77.2.* ]]

	# Across nodes, both ways, data checked by digest.
	vt_tcp_transfer "$a2" "$a2_4" "$a1" 5101
	vt_tcp_transfer "$a2" "$a2_6" "$a1" 5102
	vt_tcp_transfer "$a1" "$a1_4" "$a2" 5103
	# On node 1, between its two fast-path pods, the tc shortcut still redirects.
	tc_before="$(vt_percpu_u64 "$MN_BPFFS-n1/velo_stats_v2" 0 0 0 0)"
	vt_tcp_transfer "$b1" "$b1_4" "$a1" 5104
	tc_after="$(vt_percpu_u64 "$MN_BPFFS-n1/velo_stats_v2" 0 0 0 0)"
	echo "node 1 tc redirects: $tc_before -> $tc_after"
	[ "$tc_after" -gt $((tc_before + 100)) ]

	# Leaving the cluster, a pod's traffic takes its node's address; inside, it keeps its own.
	[ "$(mn_peer "$MN_OUT" 192.168.77.100 "$a1")" = 192.168.77.1 ]
	[ "$(mn_peer "$MN_OUT" fd00:77::100 "$a1")" = fd00:77::1 ]
	[ "$(mn_peer "$a2" "$a2_4" "$a1")" = "$a1_4" ]
	mn_in 1 nft list table inet velo_masq | grep -q 'ip saddr 10.77.1.0/24 ip daddr != @exempt0 masquerade'

	# A routed pod sending with another pod's IPv6 address: velod's guard drops it at its node
	# (IPv6 has no rp_filter; fast-path pods are checked by their tc program); its own address
	# gets through.
	vt_pod "$a1" timeout 6 python3 -c '
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("::", 9999)); s.settimeout(3); got = set()
try:
    while True:
        got.add(s.recv(100).decode())
except socket.timeout:
    pass
print(" ".join(sorted(got)) or "nothing")
' >"$VT/work/spoof6" &
	VT_PIDS+=($!)
	sleep 0.5
	# The pod takes B's address on its loopback (as root in its netns may) and sends from it.
	vt_pod "$a2" ip -6 addr add "$b1_6/128" dev lo nodad
	vt_pod "$a2" python3 - "$a2_6" "$b1_6" "$a1_6" <<'PY'
import socket, sys
own, other, dst = sys.argv[1:]
for src, payload in ((own, b"own"), (other, b"spoofed")):
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.bind((src, 0))
    for _ in range(3):
        s.sendto(payload, (dst, 9999))
PY
	wait "${VT_PIDS[@]: -1}" || true
	echo "pod a1 got over IPv6: $(cat "$VT/work/spoof6")"
	[ "$(cat "$VT/work/spoof6")" = own ]
	mn_in 2 nft list table inet velo_guard | grep -q 'iifname "vm\*" fib saddr . iif oif missing'

	# Node 2 leaves the list: node 1 drops its routes, keeps everything else.
	mn_nodes
	mn_wait_route 1 "10.77.2.0/24" absent
	mn_wait_route 1 "fd77:2::/64" absent
	mn_in 1 ip route show | grep -q "^$a1_4 dev "
}
