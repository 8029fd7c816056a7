#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# velod's uplinkXdp on a two-node cluster (multinode_lib.bash): node 2's uplink runs
# velo_xdp_uplink, which redirects frames from node 1 to node 2's XDP pods straight into their
# veths. The simulated uplink is a veth; the underlay side of it sends full checksums, as a
# wire does (ethtool tx off): a veth peer would otherwise hand XDP CHECKSUM_PARTIAL frames.
# With uplinkXdp true and the Node watch, node 2's velod asks a fake API (k8s_fake_api.bash) on
# its netns's loopback. Both nodes drop conntrack-invalid forwarded packets, as kube-proxy's
# KUBE-FORWARD chain does: the program redirects UDP only, because a TCP connection whose frames
# skip one direction of the node's conntrack is dropped there (mn_kube_proxy_invalid_drop).

load ../lib/lib
load ../lib/multinode_lib
load ../lib/k8s_fake_api
load ../lib/mn_policy_lib

setup() {
	vt_setup
	mn_setup
	command -v ethtool >/dev/null 2>&1 || skip "ethtool not installed"
}
teardown() { mn_teardown; }

UP_REDIRECT=velo_uplink_xdp_redirect_packets_total
UP_TCP='velo_uplink_xdp_pass_packets_total{reason="tcp"}'

# up_cluster [NODE2_VELOD_EXTRA_JSON]: both nodes, velod on each, routes in place.
up_cluster() {
	mkdir -p "$VT/n1" "$VT/n2"
	mn_underlay
	nsenter --net="/run/netns/velotest-mn-ul-$VT_TAG" ethtool -K vtmnu2 tx off >/dev/null
	mn_nodes 2
	mn_velod 1
	mn_velod 2 "${1:-}"
	mn_wait_route 1 "^10.77.2.0/24 via 192.168.77.2 dev ul0"
	mn_wait_route 1 "^fd77:2::/64 via fd00:77::2 dev ul0"
	mn_wait_route 2 "^10.77.1.0/24 via 192.168.77.1 dev ul0"
	mn_wait_route 2 "^fd77:1::/64 via fd00:77::1 dev ul0"
	mn_kube_proxy_invalid_drop
}

# up_metric NAME: node 2's value, waiting for velod's listener.
up_metric() {
	local _ value
	for _ in $(seq 30); do
		value="$(mn_metric 2 "$1")"
		[ -n "$value" ] && { echo "$value"; return 0; }
		sleep 0.1
	done
	echo "node 2 has no metric $1" >&2
	return 1
}

# up_restart_velod2 EXTRA_JSON: stops node 2's velod (SIGTERM) and starts it with EXTRA_JSON.
up_restart_velod2() {
	kill "$MN_VELOD_PID"
	wait "$MN_VELOD_PID" || true
	mn_velod 2 "$1"
	up_metric velo_build_info'{version="'"$("$MN_VELOD" --version | cut -d' ' -f2)"'",component="velod"}' \
		>/dev/null
}

@test "uplink XDP on node 2: UDP from node 1 reaches node 2's XDP pod through the redirect; TCP (IPv4, IPv6, both directions, digests) keeps the stack and survives kube-proxy's invalid-drop rule; a routed pod stays on the stack; restart keeps one attachment; off detaches" {
	local a1 a1_4 a1_6 a2 a2_4 a2_6 b2 b2_4 before after nopod_before nopod_after got tcp_before
	up_cluster '{"uplinkXdp": "ul0"}'
	grep -q "uplink XDP on ul0 (ifindex [0-9]*, native, attached)" "$VT/n2/velod.log"
	grep -q "uplink XDP: ul0 is a veth" "$VT/n2/velod.log"
	mn_in 2 ip link show ul0 | grep -q "prog/xdp id"
	[ "$(up_metric 'velo_uplink_xdp_attached{device="ul0"}')" = 1 ]

	mn_add 1 up-a1
	a1="$MN_POD" a1_4="$MN_IP4" a1_6="$MN_IP6"
	mn_add 2 up-a2 '{"velo.dev/fastpath": "xdp"}'
	a2="$MN_POD" a2_4="$MN_IP4" a2_6="$MN_IP6"
	mn_add 2 up-b2
	b2="$MN_POD" b2_4="$MN_IP4"

	# TCP both ways: every frame node 1 sends takes node 2's stack, so its conntrack sees the
	# whole connection and the invalid-drop rule drops nothing.
	before="$(up_metric "$UP_REDIRECT")"
	tcp_before="$(up_metric "$UP_TCP")"
	vt_tcp_transfer "$a2" "$a2_4" "$a1" 5201
	vt_tcp_transfer "$a2" "$a2_6" "$a1" 5202
	vt_tcp_transfer "$a1" "$a1_4" "$a2" 5203
	vt_tcp_transfer "$a1" "$a1_6" "$a2" 5204
	after="$(up_metric "$UP_REDIRECT")"
	got="$(up_metric "$UP_TCP")"
	echo "node 2, TCP both ways: redirects $before -> $after, passed as tcp $tcp_before -> $got"
	[ "$after" = "$before" ]
	# 2 x 4 MiB in frames of at most 1500 bytes, plus the ACKs of the other two.
	[ "$got" -gt $((tcp_before + 5000)) ]
	[ "$(mn_invalid_dropped 1)" = 0 ]
	[ "$(mn_invalid_dropped 2)" = 0 ]

	before="$after"
	got="$(mn_udp "$a1" "$a2_4" 5301 300 "$a2")"
	[ "$got" -ge 290 ]
	got="$(mn_udp "$a1" "$a2_6" 5302 300 "$a2")"
	[ "$got" -ge 290 ]
	after="$(up_metric "$UP_REDIRECT")"
	echo "node 2 uplink redirects, UDP: $before -> $after"
	[ "$after" -ge $((before + 580)) ]

	# A pod without the XDP fast path has no NAPI on its veth: the stack takes its frames.
	before="$after"
	nopod_before="$(up_metric 'velo_uplink_xdp_pass_packets_total{reason="no_xdp_pod"}')"
	got="$(mn_udp "$a1" "$b2_4" 5205 300 "$b2")"
	[ "$got" -ge 290 ]
	after="$(up_metric "$UP_REDIRECT")"
	nopod_after="$(up_metric 'velo_uplink_xdp_pass_packets_total{reason="no_xdp_pod"}')"
	echo "routed pod: redirects $before -> $after, passed $nopod_before -> $nopod_after"
	[ "$after" -lt $((before + 20)) ]
	[ "$nopod_after" -ge $((nopod_before + 290)) ]

	# A restarted velod keeps the pinned link (one attachment, program updated).
	up_restart_velod2 '{"uplinkXdp": "ul0"}'
	grep -q "uplink XDP on ul0 (ifindex [0-9]*, native, pinned link kept, program updated)" \
		"$VT/n2/velod.log"
	[ "$(mn_in 2 ip -d link show ul0 | grep -c 'prog/xdp id')" = 1 ]
	before="$(up_metric "$UP_REDIRECT")"
	got="$(mn_udp "$a1" "$a2_4" 5206 300 "$a2")"
	[ "$got" -ge 290 ]
	after="$(up_metric "$UP_REDIRECT")"
	echo "after a velod restart: $before -> $after"
	[ "$after" -ge $((before + 290)) ]

	# Off: the next velod detaches it, traffic still flows (routed) and the counters stay.
	up_restart_velod2 '{"uplinkXdp": false}'
	grep -q "uplink XDP: off; detached" "$VT/n2/velod.log"
	if mn_in 2 ip link show ul0 | grep "prog/xdp"; then false; fi
	[ "$(up_metric 'velo_uplink_xdp_attached{device=""}')" = 0 ]
	before="$(up_metric "$UP_REDIRECT")"
	vt_tcp_transfer "$a2" "$a2_4" "$a1" 5207
	vt_tcp_transfer "$a2" "$a2_6" "$a1" 5208
	got="$(mn_udp "$a1" "$a2_4" 5303 100 "$a2")"
	[ "$got" -ge 95 ]
	after="$(up_metric "$UP_REDIRECT")"
	echo "setting off: $before -> $after"
	[ "$after" = "$before" ]
}

@test "uplink XDP: a pod deleted while node 1 streams to it leaves node 2 working, no kernel splat" {
	local a1 a1_4 a2 a2_4 c2 c2_4 splats before after got
	# true: the device that holds this node's address in the node list.
	up_cluster '{"uplinkXdp": true}'
	grep -q "uplink XDP on ul0 (ifindex [0-9]*, native, attached)" "$VT/n2/velod.log"
	mn_add 1 up-a1
	a1="$MN_POD" a1_4="$MN_IP4"
	mn_add 2 up-a2 '{"velo.dev/fastpath": "xdp"}'
	a2="$MN_POD" a2_4="$MN_IP4"
	mn_add 2 up-c2 '{"velo.dev/fastpath": "xdp"}'
	c2="$MN_POD" c2_4="$MN_IP4"
	splats="$(vt_splats)"

	# UDP as fast as python sends and a TCP stream, both into a2, while a2 is deleted.
	vt_pod "$a2" timeout 10 socat -u TCP4-LISTEN:5401,reuseaddr /dev/null &
	VT_PIDS+=($!)
	sleep 0.3
	vt_pod "$a1" timeout 4 socat -u /dev/zero "TCP4:$a2_4:5401,connect-timeout=3" &
	VT_PIDS+=($!)
	vt_pod "$a1" timeout 4 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
while True:
    try:
        s.sendto(b"x" * 64, (sys.argv[1], 5402))
    except OSError:
        pass
' "$a2_4" &
	VT_PIDS+=($!)
	sleep 1
	before="$(up_metric "$UP_REDIRECT")"
	mn_del 2 up-a2 "$a2"
	ip netns del "$a2"
	sleep 1.5
	wait "${VT_PIDS[@]: -1}" || true
	echo "redirects before the DEL: $before"
	[ "$before" -gt 1000 ]

	# Node 2 still forwards through XDP to its other pod (UDP) and through its stack (TCP), and
	# the kernel logged no splat.
	before="$(up_metric "$UP_REDIRECT")"
	got="$(mn_udp "$a1" "$c2_4" 5403 300 "$c2")"
	[ "$got" -ge 290 ]
	after="$(up_metric "$UP_REDIRECT")"
	echo "to the remaining pod: $before -> $after"
	[ "$after" -ge $((before + 290)) ]
	vt_tcp_transfer "$c2" "$c2_4" "$a1" 5404
	after="$(vt_splats)"
	[ "$after" -eq "$splats" ] || { echo "kernel warnings: $splats -> $after"; dmesg | tail -40; false; }
}

@test "uplink XDP true with the Node watch: attaches to node 2's uplink after the Node LIST, node 1's traffic is redirected; follows node 2's address to another device" {
	local a1 a2 a2_4 before after got
	command -v openssl >/dev/null || skip "openssl not installed"
	# shellcheck disable=SC2034 # read by k8s_fake_api.bash
	K8_NODE="$(mn_node 2)" K8_API="$VT/api" K8_PORT=16443
	mkdir -p "$VT/n1" "$VT/n2" "$K8_API"
	mn_underlay
	nsenter --net="/run/netns/velotest-mn-ul-$VT_TAG" ethtool -K vtmnu2 tx off >/dev/null
	# Node 1 reads nodesFile; node 2 has only the API, whose LIST fails at first.
	mn_nodes 2
	k8_certs
	k8_event ADDED n1 "192.168.77.1 fd00:77::1" "10.77.1.0/24 fd77:1::/64"
	k8_event ADDED n2 "192.168.77.2 fd00:77::2" "10.77.2.0/24 fd77:2::/64"
	touch "$K8_API/fail-list"
	k8_server
	mn_velod 1
	mn_velod 2 "$(jq -cn --arg k "$K8_API/kubeconfig" \
		'{nodesFile: "", kubeconfig: $k, uplinkXdp: true}')"

	# No node list yet: nothing attached, and the log says what it waits for.
	mn_wait_log 2 "uplink XDP: attaches once the node list has node n2's address" 5
	for _ in $(seq 50); do
		grep -q " /api/v1/nodes?limit=" "$K8_API/requests.log" 2>/dev/null && break
		sleep 0.1
	done
	grep -q " /api/v1/nodes?limit=" "$K8_API/requests.log" # a LIST was asked (and failed)
	sleep 0.5
	if mn_in 2 ip link show ul0 | grep "prog/xdp"; then false; fi

	rm "$K8_API/fail-list"
	mn_wait_log 2 "uplink XDP on ul0 (ifindex [0-9]*, native, attached)" 15
	mn_in 2 ip link show ul0 | grep -q "prog/xdp id"
	[ "$(up_metric 'velo_uplink_xdp_attached{device="ul0"}')" = 1 ]
	mn_wait_route 1 "^10.77.2.0/24 via 192.168.77.2 dev ul0"
	mn_wait_route 2 "^10.77.1.0/24 via 192.168.77.1 dev ul0"
	mn_kube_proxy_invalid_drop

	mn_add 1 up-a1
	a1="$MN_POD"
	mn_add 2 up-a2 '{"velo.dev/fastpath": "xdp"}'
	a2="$MN_POD" a2_4="$MN_IP4"
	before="$(up_metric "$UP_REDIRECT")"
	got="$(mn_udp "$a1" "$a2_4" 5501 300 "$a2")"
	[ "$got" -ge 290 ]
	after="$(up_metric "$UP_REDIRECT")"
	echo "node 2 uplink redirects (API node list), node 1 -> node 2 UDP: $before -> $after"
	[ "$after" -ge $((before + 290)) ]

	# Node 2's address moves to another device: the program follows, ul0 has none left.
	mn_in 2 ip link add vtmnx0 type veth peer name vtmnx1
	mn_in 2 ip addr add 192.168.79.2/24 dev vtmnx0
	mn_in 2 ip link set vtmnx1 up
	mn_in 2 ip link set vtmnx0 up
	k8_event MODIFIED n2 "192.168.79.2" "10.77.2.0/24 fd77:2::/64"
	mn_wait_log 2 "uplink XDP on vtmnx0 (ifindex [0-9]*, native, attached)" 5
	grep -q "uplink XDP: node n2's address is on vtmnx0 now" "$VT/n2/velod.log"
	mn_in 2 ip link show vtmnx0 | grep -q "prog/xdp id"
	if mn_in 2 ip link show ul0 | grep "prog/xdp"; then false; fi
	[ "$(up_metric 'velo_uplink_xdp_attached{device="vtmnx0"}')" = 1 ]
}

@test "uplink XDP with NetworkPolicy: a pod on node 2 isolated for ingress is not reachable from node 1 through the redirect; what its policy allows flows and is redirected once allowed" {
	local a1 a1_4 a1_6 c1 c1_4 c1_6 b2 b2_4 b2_6 pods pol before after passed got
	mkdir -p "$VT/n2"
	mnp_file "$VT/n2/policy.json" '[]' '[]'
	up_cluster "$(jq -cn --arg f "$VT/n2/policy.json" '{uplinkXdp: "ul0",
		policySource: "file", policyFile: $f, policySyncMs: 50}')"
	grep -q "uplink XDP on ul0 (ifindex [0-9]*, native, attached)" "$VT/n2/velod.log"

	mn_add 1 up-a1
	a1="$MN_POD" a1_4="$MN_IP4" a1_6="$MN_IP6"
	mn_add 1 up-c1
	c1="$MN_POD" c1_4="$MN_IP4" c1_6="$MN_IP6"
	mnp_add 2 b '{"velo.dev/fastpath": "xdp"}'
	b2="$MN_POD" b2_4="$MN_IP4" b2_6="$MN_IP6"
	pods="[$(mnp_pod 1 a "$a1_4" "$a1_6"),$(mnp_pod 1 c "$c1_4" "$c1_6"),$(mnp_pod 2 b "$b2_4" "$b2_6")]"
	# x/b admits x/a (TCP and UDP 5601-5610) and nothing else.
	pol='[{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
		"metadata": {"namespace": "x", "name": "b-from-a"},
		"spec": {"podSelector": {"matchLabels": {"pod": "b"}}, "policyTypes": ["Ingress"],
		"ingress": [{"from": [{"podSelector": {"matchLabels": {"pod": "a"}}}],
		"ports": [{"protocol": "TCP", "port": 5601, "endPort": 5610},
			{"protocol": "UDP", "port": 5601, "endPort": 5610}]}]}}]'
	before="$(up_metric velo_policy_syncs_total)"
	mnp_file "$VT/n2/policy.json" "$pods" "$pol"
	mnp_wait_syncs 2 $((${before%.*} + 1))
	for _ in $(seq 50); do
		ls "$MN_BPFFS-n2"/links/*_pol_to >/dev/null 2>&1 && break
		sleep 0.1
	done
	ls "$MN_BPFFS-n2"/links/*_pol_to

	vt_pod "$b2" timeout 300 socat TCP6-LISTEN:5601,ipv6only=0,reuseaddr,fork /dev/null &
	VT_PIDS+=($!)
	for _ in $(seq 50); do
		vt_pod "$b2" ss -Hltn "sport = :5601" | grep -q . && break
		sleep 0.1
	done
	# x/c may not connect, IPv4 or IPv6 (TCP takes the stack, where velo_pol_to drops the SYN),
	# nor send UDP: its datagrams are passed for policy, and velo_pol_to drops them.
	got="$(mnp_connect "$c1" "$b2_4" 5601)"
	echo "x/c -> x/b (IPv4): $got"
	[ "$got" = no ]
	got="$(mnp_connect "$c1" "$b2_6" 5601)"
	echo "x/c -> x/b (IPv6): $got"
	[ "$got" = no ]
	before="$(up_metric "$UP_REDIRECT")"
	got="$(mn_udp "$c1" "$b2_4" 5605 100 "$b2")"
	echo "x/c -> x/b UDP: $got of 100 arrived"
	[ "$got" = 0 ]
	passed="$(up_metric 'velo_uplink_xdp_pass_packets_total{reason="policy"}')"
	echo "passed to the stack for policy: $passed"
	[ "$passed" -ge 100 ]
	after="$(up_metric "$UP_REDIRECT")"
	[ "$after" = "$before" ]

	# x/a may: TCP through the stack; UDP's first datagram takes the stack, where velo_pol_to
	# allows it, and the rest is redirected.
	got="$(mnp_connect "$a1" "$b2_4" 5601)"
	echo "x/a -> x/b (IPv4): $got"
	[ "$got" = ok ]
	vt_tcp_transfer "$b2" "$b2_4" "$a1" 5603
	vt_tcp_transfer "$b2" "$b2_6" "$a1" 5604
	before="$(up_metric "$UP_REDIRECT")"
	got="$(mn_udp "$a1" "$b2_4" 5606 300 "$b2")"
	[ "$got" -ge 290 ]
	got="$(mn_udp "$a1" "$b2_6" 5607 300 "$b2")"
	[ "$got" -ge 290 ]
	after="$(up_metric "$UP_REDIRECT")"
	echo "node 2 uplink redirects, x/a -> x/b UDP: $before -> $after"
	[ "$after" -ge $((before + 570)) ]
}
