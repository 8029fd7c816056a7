#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# velod's crossNodeTc on a two-node cluster (multinode_lib.bash): TCP between pods with the tc
# shortcut on different nodes leaves by the uplink straight from the sender's veth and enters
# the receiver's netns straight from its node's uplink, past both nodes' routing and netfilter.
# Both nodes drop conntrack-invalid forwarded packets, as kube-proxy's KUBE-FORWARD chain does,
# and count what their forward hook sees of the test's ports: a node whose conntrack saw half
# of a connection would drop the rest (docs/uplink.md), one that takes the shortcut sees none.

load ../lib/lib
load ../lib/multinode_lib
load ../lib/mn_policy_lib

setup() {
	vt_setup
	mn_setup
}
teardown() { mn_teardown; }

# enum velo_cross_stat (bpf/lib/velo_cross.h).
CN_TX=0
CN_TX_NEIGH=1
CN_RX=5
CN_RX_NO_POD=8
CN_RX_PENDING=11
CN_RX_DROP_POLICY=13

# cn_stat N STAT: packets node N's velo_cross_v1 counted under STAT.
cn_stat() { vt_percpu_u64 "$MN_BPFFS-n$1/velo_cross_v1" "$2" 0 0 0; }

# cn_forwarded N: TCP packets of ports 5000-5999 node N's forward hook saw.
cn_forwarded() {
	mn_in "$1" nft list chain inet velotest_kube forward |
		awk '/tcp [ds]port 5000-5999 counter/ { n += $(NF - 2) } END { print n + 0 }'
}

# cn_cluster [EXTRA_JSON]: both nodes, velod on each with crossNodeTc (plus EXTRA_JSON, an
# object), routes and the uplink program in place, kube-proxy's invalid drop, the port counters.
cn_cluster() {
	local extra n
	extra="$(jq -cn --argjson x "${1:-{\}}" '{crossNodeTc: true} + $x')"
	mkdir -p "$VT/n1" "$VT/n2"
	mn_underlay
	mn_nodes 2
	mn_velod 1 "$extra"
	mn_velod 2 "$extra"
	mn_wait_route 1 "^10.77.2.0/24 via 192.168.77.2 dev ul0"
	mn_wait_route 1 "^fd77:2::/64 via fd00:77::2 dev ul0"
	mn_wait_route 2 "^10.77.1.0/24 via 192.168.77.1 dev ul0"
	mn_wait_route 2 "^fd77:1::/64 via fd00:77::1 dev ul0"
	mn_kube_proxy_invalid_drop
	for n in 1 2; do
		mn_wait_log "$n" "cross-node tc on ul0 (ifindex [0-9]*)" 10
		mn_in "$n" nft add rule inet velotest_kube forward tcp dport 5000-5999 counter
		mn_in "$n" nft add rule inet velotest_kube forward tcp sport 5000-5999 counter
	done
}

# cn_policy_cluster: cn_cluster with node 2's velod reading NetworkPolicy from
# $VT/n2/policy.json (mnp_file), empty to start with.
cn_policy_cluster() {
	mkdir -p "$VT/n2"
	mnp_file "$VT/n2/policy.json" '[]' '[]'
	cn_cluster "$(jq -cn --arg f "$VT/n2/policy.json" '{policySource: "file",
		policyFile: $f, policySyncMs: 50}')"
}

@test "cross-node tc: TCP both ways between tc pods on two nodes (IPv4, IPv6) skips both nodes' forward hooks and survives kube-proxy's invalid drop; to a routed pod only the tc pod's node takes it; off detaches and empties the map" {
	local a1 a1_4 a1_6 a2 a2_4 a2_6 b2 b2_4 tx1 rx1 tx2 rx2 nopod
	cn_cluster
	[ "$(bpftool -j map dump pinned "$MN_BPFFS-n1/velo_remote_v1" | jq length)" = 2 ]
	[ "$(mn_metric 1 'velo_cross_node_attached{device="ul0"}')" = 1 ]
	[ "$(mn_metric 2 velo_cross_node_remote_cidrs)" = 2 ]
	mn_add 1 cn-a1 '{"velo.dev/fastpath": "tc"}'
	a1="$MN_POD" a1_4="$MN_IP4" a1_6="$MN_IP6"
	mn_add 2 cn-a2 '{"velo.dev/fastpath": "tc"}'
	a2="$MN_POD" a2_4="$MN_IP4" a2_6="$MN_IP6"
	mn_add 2 cn-b2
	b2="$MN_POD" b2_4="$MN_IP4"

	tx1="$(cn_stat 1 $CN_TX)" rx1="$(cn_stat 1 $CN_RX)"
	tx2="$(cn_stat 2 $CN_TX)" rx2="$(cn_stat 2 $CN_RX)"
	vt_tcp_transfer "$a2" "$a2_4" "$a1" 5201
	vt_tcp_transfer "$a2" "$a2_6" "$a1" 5202
	vt_tcp_transfer "$a1" "$a1_4" "$a2" 5203
	echo "node 1: sent $tx1 -> $(cn_stat 1 $CN_TX), received $rx1 -> $(cn_stat 1 $CN_RX)"
	echo "node 2: sent $tx2 -> $(cn_stat 2 $CN_TX), received $rx2 -> $(cn_stat 2 $CN_RX)"
	echo "of those sent, by the neighbour subsystem: node 1 $(cn_stat 1 $CN_TX_NEIGH), node 2 $(cn_stat 2 $CN_TX_NEIGH)"
	# Both ways out: IPv4 takes the route lookup's MACs; IPv6, whose forwarding these nodes leave
	# off on pod veths (so the lookup declines), the neighbour subsystem's.
	[ "$(($(cn_stat 1 $CN_TX) - $(cn_stat 1 $CN_TX_NEIGH)))" -ge 100 ]
	[ "$(cn_stat 1 $CN_TX_NEIGH)" -ge 50 ]
	[ "$(mn_metric 1 velo_cross_node_send_neigh_packets_total)" = "$(cn_stat 1 $CN_TX_NEIGH)" ]
	# 3 x 4 MiB each way in GSO packets of up to 64 KiB, and their ACKs the other way.
	[ "$(cn_stat 1 $CN_TX)" -ge $((tx1 + 150)) ]
	[ "$(cn_stat 2 $CN_RX)" -ge $((rx2 + 150)) ]
	[ "$(cn_stat 2 $CN_TX)" -ge $((tx2 + 150)) ]
	[ "$(cn_stat 1 $CN_RX)" -ge $((rx1 + 150)) ]
	[ "$(mn_metric 1 'velo_cross_node_redirect_packets_total{direction="send"}')" = \
		"$(cn_stat 1 $CN_TX)" ]
	[ "$(mn_metric 2 'velo_cross_node_redirect_packets_total{direction="receive"}')" = \
		"$(cn_stat 2 $CN_RX)" ]
	echo "forward hooks saw: node 1 $(cn_forwarded 1), node 2 $(cn_forwarded 2)"
	[ "$(cn_forwarded 1)" = 0 ]
	[ "$(cn_forwarded 2)" = 0 ]
	[ "$(mn_invalid_dropped 1)" = 0 ]
	[ "$(mn_invalid_dropped 2)" = 0 ]

	# b2 has no shortcut: node 2 routes its flows both ways, node 1 takes a1's both ways.
	nopod="$(cn_stat 2 $CN_RX_NO_POD)"
	tx2="$(cn_stat 2 $CN_TX)"
	vt_tcp_transfer "$b2" "$b2_4" "$a1" 5204
	echo "to routed b2: node 2 passed $nopod -> $(cn_stat 2 $CN_RX_NO_POD), forwarded $(cn_forwarded 2)"
	[ "$(cn_stat 2 $CN_RX_NO_POD)" -ge $((nopod + 64)) ]
	[ "$(mn_metric 2 'velo_cross_node_pass_packets_total{direction="receive",reason="no_tc_pod"}')" = \
		"$(cn_stat 2 $CN_RX_NO_POD)" ]
	[ "$(cn_stat 2 $CN_TX)" = "$tx2" ]
	[ "$(cn_forwarded 1)" = 0 ]
	[ "$(cn_forwarded 2)" -ge 64 ]
	[ "$(mn_invalid_dropped 1)" = 0 ]
	[ "$(mn_invalid_dropped 2)" = 0 ]

	# Off on node 2: its velod empties the map and detaches; node 2 routes, node 1 still not.
	kill "$MN_VELOD_PID"
	wait "$MN_VELOD_PID" || true
	mn_velod 2 '{"crossNodeTc": false}'
	mn_wait_log 2 "cross-node tc: detached the program an earlier velod attached to ul0" 10
	[ "$(bpftool -j map dump pinned "$MN_BPFFS-n2/velo_remote_v1" | jq length)" = 0 ]
	if mn_in 2 bpftool net show dev ul0 | grep velo_tc_uplink; then false; fi
	rx2="$(cn_stat 2 $CN_RX)" tx2="$(cn_stat 2 $CN_TX)"
	vt_tcp_transfer "$a2" "$a2_4" "$a1" 5205
	[ "$(cn_stat 2 $CN_RX)" = "$rx2" ]
	[ "$(cn_stat 2 $CN_TX)" = "$tx2" ]
	[ "$(mn_invalid_dropped 1)" = 0 ]
	[ "$(mn_invalid_dropped 2)" = 0 ]
}

@test "cross-node tc with NetworkPolicy: the receiving node judges what the isolated pod's veth would; a denied peer is dropped at the uplink, an allowed one gets the shortcut both ways" {
	local a1 a1_4 a1_6 c1 c1_4 c1_6 b2 b2_4 b2_6 pods pol before got drops rx2
	cn_policy_cluster
	mn_add 1 cn-a1 '{"velo.dev/fastpath": "tc"}'
	a1="$MN_POD" a1_4="$MN_IP4" a1_6="$MN_IP6"
	mn_add 1 cn-c1 '{"velo.dev/fastpath": "tc"}'
	c1="$MN_POD" c1_4="$MN_IP4" c1_6="$MN_IP6"
	mnp_add 2 b '{"velo.dev/fastpath": "tc"}'
	b2="$MN_POD" b2_4="$MN_IP4" b2_6="$MN_IP6"
	pods="[$(mnp_pod 1 a "$a1_4" "$a1_6"),$(mnp_pod 1 c "$c1_4" "$c1_6"),$(mnp_pod 2 b "$b2_4" "$b2_6")]"
	# x/b admits x/a on TCP 5601-5610 and nothing else.
	pol='[{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
		"metadata": {"namespace": "x", "name": "b-from-a"},
		"spec": {"podSelector": {"matchLabels": {"pod": "b"}}, "policyTypes": ["Ingress"],
		"ingress": [{"from": [{"podSelector": {"matchLabels": {"pod": "a"}}}],
		"ports": [{"protocol": "TCP", "port": 5601, "endPort": 5610}]}]}}]'
	before="$(mn_metric 2 velo_policy_syncs_total)"
	mnp_file "$VT/n2/policy.json" "$pods" "$pol"
	mnp_wait_syncs 2 $((${before%.*} + 1))
	mnp_wait_link 2 pol_to
	mnp_serve "$b2" "::" 5601

	drops="$(cn_stat 2 $CN_RX_DROP_POLICY)"
	got="$(mnp_connect "$c1" "$b2_4" 5601)"
	echo "x/c -> x/b (IPv4): $got"
	[ "$got" = no ]
	got="$(mnp_connect "$c1" "$b2_6" 5601)"
	echo "x/c -> x/b (IPv6): $got"
	[ "$got" = no ]
	echo "dropped at node 2's uplink for policy: $drops -> $(cn_stat 2 $CN_RX_DROP_POLICY)"
	[ "$(cn_stat 2 $CN_RX_DROP_POLICY)" -ge $((drops + 2)) ]
	[ "$(mn_metric 2 'velo_cross_node_drop_packets_total{reason="policy"}')" = \
		"$(cn_stat 2 $CN_RX_DROP_POLICY)" ]

	rx2="$(cn_stat 2 $CN_RX)"
	got="$(mnp_connect "$a1" "$b2_4" 5601)"
	echo "x/a -> x/b (IPv4): $got"
	[ "$got" = ok ]
	vt_tcp_transfer "$b2" "$b2_4" "$a1" 5603
	vt_tcp_transfer "$b2" "$b2_6" "$a1" 5604
	# Outside the ports the policy names, x/a is refused too.
	got="$(mnp_connect "$a1" "$b2_4" 5701)"
	[ "$got" = no ]
	echo "node 2 received through the shortcut: $rx2 -> $(cn_stat 2 $CN_RX)"
	[ "$(cn_stat 2 $CN_RX)" -ge $((rx2 + 128)) ]
	# x/b isn't isolated for egress: its own connection to x/c, and the replies, pass.
	mnp_serve "$c1" "::" 5605
	got="$(mnp_connect "$b2" "$c1_4" 5605)"
	echo "x/b -> x/c (IPv4): $got"
	[ "$got" = ok ]
	[ "$(cn_forwarded 1)" = 0 ]
	[ "$(cn_forwarded 2)" = 0 ]
	[ "$(mn_invalid_dropped 1)" = 0 ]
	[ "$(mn_invalid_dropped 2)" = 0 ]
}

@test "cross-node tc: a connection the stack carried while its pod waited for velod to place it moves to the shortcut once placed, and survives kube-proxy's invalid drop" {
	local a1 a1_4 a1_6 b2 b2_4 b2_6 z2_4 z2_6 pods pol before pending rx2 got
	cn_policy_cluster
	mn_add 1 cn-a1 '{"velo.dev/fastpath": "tc"}'
	a1="$MN_POD" a1_4="$MN_IP4" a1_6="$MN_IP6"
	# x/b without policy programs on its veth (as a pod of a namespace without policies): the
	# stack delivers to it whether or not velod knows it.
	mn_add 2 cn-b2 '{"velo.dev/fastpath": "tc"}'
	b2="$MN_POD" b2_4="$MN_IP4" b2_6="$MN_IP6"
	mnp_add 2 z
	z2_4="$MN_IP4" z2_6="$MN_IP6"
	# Policy is on at node 2 (x/z is isolated), and velod doesn't know x/b yet.
	pol='[{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
		"metadata": {"namespace": "x", "name": "z-deny"},
		"spec": {"podSelector": {"matchLabels": {"pod": "z"}}, "policyTypes": ["Ingress"]}}]'
	before="$(mn_metric 2 velo_policy_syncs_total)"
	mnp_file "$VT/n2/policy.json" "[$(mnp_pod 2 z "$z2_4" "$z2_6")]" "$pol"
	mnp_wait_syncs 2 $((${before%.*} + 1))

	# A 6 s connection from a1: 64 KiB every 50 ms; x/b is placed half way through.
	vt_pod "$b2" timeout 20 python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5801)); s.listen(1)
c, _ = s.accept(); n = 0
while True:
    d = c.recv(65536)
    if not d:
        break
    n += len(d)
print(n)
' >"$VT/work/received" &
	VT_PIDS+=($!)
	for _ in $(seq 50); do
		vt_pod "$b2" ss -Hltn "sport = :5801" | grep -q . && break
		sleep 0.1
	done
	pending="$(cn_stat 2 $CN_RX_PENDING)" rx2="$(cn_stat 2 $CN_RX)"
	vt_pod "$a1" timeout 20 python3 -c '
import socket, sys, time
s = socket.create_connection((sys.argv[1], 5801), timeout=5)
for _ in range(120):
    s.sendall(b"v" * 65536)
    time.sleep(0.05)
s.close()
' "$b2_4" &
	VT_PIDS+=($!)
	sleep 2
	echo "before placing x/b: pending $pending -> $(cn_stat 2 $CN_RX_PENDING), redirected $rx2 -> $(cn_stat 2 $CN_RX)"
	[ "$(cn_stat 2 $CN_RX_PENDING)" -ge $((pending + 20)) ]
	[ "$(cn_stat 2 $CN_RX)" = "$rx2" ]
	pods="[$(mnp_pod 2 z "$z2_4" "$z2_6"),$(mnp_pod 2 b "$b2_4" "$b2_6"),$(mnp_pod 1 a "$a1_4" "$a1_6")]"
	before="$(mn_metric 2 velo_policy_syncs_total)"
	mnp_file "$VT/n2/policy.json" "$pods" "$pol"
	mnp_wait_syncs 2 $((${before%.*} + 1))
	wait "${VT_PIDS[@]: -1}"
	wait "${VT_PIDS[@]: -2:1}"
	got="$(cat "$VT/work/received")"
	echo "received $got bytes; after placing: redirected $rx2 -> $(cn_stat 2 $CN_RX)"
	[ "$got" = $((120 * 65536)) ]
	[ "$(cn_stat 2 $CN_RX)" -ge $((rx2 + 20)) ]
	[ "$(mn_invalid_dropped 1)" = 0 ]
	[ "$(mn_invalid_dropped 2)" = 0 ]
}
