#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Nodes whose underlay addresses are in different subnets (routingMode host-gw, vxlan, auto):
# node 1 (192.168.71.1, fd00:71::1) and node 3 (.3, ::3) share a bridge in a router namespace,
# node 2 (192.168.72.2, fd00:72::2) sits behind the router's other link. Each node is a network
# namespace with its own velo paths, velod and pods wired by velo's plugin (multinode_lib.bash).
# The nodes' default routes lead to the router, which knows no pod CIDR: traffic stays in these
# namespaces, and host-gw's packets to node 2's pods end there.

load ../lib/lib
load ../lib/multinode_lib
load ../lib/mn_policy_lib

setup() {
	vt_setup
	mn_setup
	mkdir -p "$VT/n1" "$VT/n2" "$VT/n3"
	vx_underlay
}
teardown() {
	if [ -n "${VX_CGROUP:-}" ]; then
		vt_cgroup_kill "$VX_CGROUP" || true
		rmdir "$VX_CGROUP" 2>/dev/null || true
	fi
	ip netns del "$(mn_node 3)" 2>/dev/null || true
	mn_teardown
}

# vx_underlay: the router namespace (mn_teardown removes it by its name) with a bridge for
# nodes 1 and 3 and a link to node 2; forwarding on in the router only.
vx_underlay() {
	local rt="velotest-mn-ul-$VT_TAG" i net
	ip netns add "$rt"
	ip -n "$rt" link set lo up
	ip -n "$rt" link add br71 type bridge
	ip -n "$rt" addr add 192.168.71.254/24 dev br71
	ip -n "$rt" addr add fd00:71::254/64 dev br71 nodad
	ip -n "$rt" link set br71 up
	nsenter --net="/run/netns/$rt" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	for i in 1 2 3; do
		net=71
		[ "$i" != 2 ] || net=72
		ip netns add "$(mn_node "$i")"
		ip link add "vtvxu$i" netns "$rt" type veth peer name ul0 netns "$(mn_node "$i")"
		if [ "$i" = 2 ]; then
			ip -n "$rt" addr add 192.168.72.254/24 dev vtvxu2
			ip -n "$rt" addr add fd00:72::254/64 dev vtvxu2 nodad
		else
			ip -n "$rt" link set "vtvxu$i" master br71
		fi
		ip -n "$rt" link set "vtvxu$i" up
		ip -n "$(mn_node "$i")" link set lo up
		ip -n "$(mn_node "$i")" addr add "192.168.$net.$i/24" dev ul0
		ip -n "$(mn_node "$i")" addr add "fd00:$net::$i/64" dev ul0 nodad
		ip -n "$(mn_node "$i")" link set ul0 up
		ip -n "$(mn_node "$i")" route add default via "192.168.$net.254"
		ip -n "$(mn_node "$i")" -6 route add default via "fd00:$net::254"
		mn_in "$i" sysctl -qw net.ipv4.ip_forward=0 net.ipv4.conf.all.forwarding=0 \
			net.ipv6.conf.all.forwarding=0
	done
}

# vx_nodes [N...]: the node list with nodes 1 and 2, and the nodes named (3).
vx_nodes() {
	jq -n --arg more "$*" '{nodes: ([
		{name: "n1", addresses: ["192.168.71.1", "fd00:71::1"],
		 podCIDRs: ["10.77.1.0/24", "fd77:1::/64"]},
		{name: "n2", addresses: ["192.168.72.2", "fd00:72::2"],
		 podCIDRs: ["10.77.2.0/24", "fd77:2::/64"]}] +
		(if ($more | contains("3")) then [{name: "n3", addresses: ["192.168.71.3", "fd00:71::3"],
		 podCIDRs: ["10.77.3.0/24", "fd77:3::/64"]}] else [] end))}' >"$VT/nodes.json.new"
	mv "$VT/nodes.json.new" "$VT/nodes.json"
}

# vx_velod N MODE [EXTRA_JSON]: velod on node N in routingMode MODE, its source guard on velo*
# as shipped (which covers the tunnel devices; the test's pods have vm* veths).
vx_velod() {
	mn_velod "$1" "$(jq -cn --arg m "$2" --argjson x "${3:-{\}}" '{routingMode: $m,
		logLevel: "debug", sourceGuardPrefix: "velo"} + $x')"
	eval "VX_VELOD$1=$MN_VELOD_PID"
}

# vx_wait_synced N: waits (10 s) for node N's velod to have made a pass.
vx_wait_synced() {
	local _
	for _ in $(seq 100); do
		[ "$(mn_metric "$1" velo_hostgw_syncs_total)" -ge 1 ] 2>/dev/null && return 0
		sleep 0.1
	done
	echo "node $1's velod made no pass in 10 s"
	tail -n 20 "$VT/n$1/velod.log"
	return 1
}

# vx_stop N: stops node N's velod (SIGTERM), as a DaemonSet's rollout does.
vx_stop() {
	local var="VX_VELOD$1"
	kill -TERM "${!var}"
	wait "${!var}" || true
}

# vx_mtu POD: the MTU of the pod's eth0.
vx_mtu() {
	vt_pod "$1" ip -o link show dev eth0 | sed -n 's/.* mtu \([0-9]*\) .*/\1/p'
}

# vx_wait_bound POD SS_FLAGS PORT: waits (5 s) for a socket of POD bound to PORT.
vx_wait_bound() {
	local _
	for _ in $(seq 50); do
		vt_pod "$1" ss "$2" "sport = :$3" | grep -q . && return 0
		sleep 0.1
	done
	echo "nothing bound to port $3 in $1"
	return 1
}

# vx_udp_df SERVER_POD SERVER_ADDR CLIENT_POD SIZE: one UDP datagram whose IP packet is SIZE
# bytes, sent with fragmentation forbidden, arrives whole (SHA-256 of the payload compared).
vx_udp_df() {
	local port=$((40000 + RANDOM % 10000)) pid sent got
	vt_pod "$1" timeout 10 python3 -c '
import hashlib, socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2]))); s.settimeout(8)
print(hashlib.sha256(s.recv(70000)).hexdigest())
' "$2" "$port" >"$VT/work/udp.$port" 2>&1 &
	pid=$!
	VT_PIDS+=("$pid")
	vx_wait_bound "$1" -Hlun "$port"
	sent="$(vt_pod "$3" python3 -c '
import hashlib, os, socket, sys, time
addr, port, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
v6 = ":" in addr
s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
if v6:
    s.setsockopt(socket.IPPROTO_IPV6, 23, 2)  # IPV6_MTU_DISCOVER = IPV6_PMTUDISC_DO
    s.setsockopt(socket.IPPROTO_IPV6, 62, 1)  # IPV6_DONTFRAG
else:
    s.setsockopt(socket.IPPROTO_IP, 10, 2)  # IP_MTU_DISCOVER = IP_PMTUDISC_DO
payload = os.urandom(size - (48 if v6 else 28))
for _ in range(3):
    s.sendto(payload, (addr, port)); time.sleep(0.2)
print(hashlib.sha256(payload).hexdigest())
' "$2" "$port" "$4")" || {
		kill "$pid" 2>/dev/null
		echo "send of $4 bytes to $2 failed: $sent"
		return 1
	}
	wait "$pid" || true
	got="$(cat "$VT/work/udp.$port")"
	[ "$sent" = "$got" ] || { echo "UDP $4 bytes to $2: sent $sent, received '$got'"; return 1; }
}

# vx_tcp_64k SERVER_POD SERVER_ADDR CLIENT_POD: 64 KiB over TCP, SHA-256 compared.
vx_tcp_64k() {
	local port=$((40000 + RANDOM % 10000)) pid sent got
	vt_pod "$1" timeout 15 python3 -c '
import hashlib, socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1); s.settimeout(12)
c, _ = s.accept(); c.settimeout(10); data = b""
while True:
    chunk = c.recv(65536)
    if not chunk:
        break
    data += chunk
print(hashlib.sha256(data).hexdigest())
' "$2" "$port" >"$VT/work/tcp.$port" 2>&1 &
	pid=$!
	VT_PIDS+=("$pid")
	vx_wait_bound "$1" -Hltn "$port"
	sent="$(vt_pod "$3" timeout 10 python3 -c '
import hashlib, os, socket, sys
data = os.urandom(65536)
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
c.sendall(data); c.shutdown(socket.SHUT_WR); c.recv(1); c.close()
print(hashlib.sha256(data).hexdigest())
' "$2" "$port")" || { echo "64 KiB to $2 failed: $sent"; return 1; }
	wait "$pid" || true
	got="$(cat "$VT/work/tcp.$port")"
	[ "$sent" = "$got" ] || { echo "TCP 64 KiB to $2: sent $sent, received '$got'"; return 1; }
}

# vx_unreachable CLIENT_POD ADDR: a TCP connect to ADDR fails (nothing routes it there).
vx_unreachable() {
	if vt_pod "$1" timeout 5 python3 -c '
import socket, sys
socket.create_connection((sys.argv[1], 9), timeout=2)
' "$2" 2>/dev/null; then
		echo "$2 answered from $1"
		return 1
	fi
}

# vx_pods [3] [P1_ANNOTATIONS_JSON]: a pod on nodes 1 and 2 (and 3 with "3"): P1, P1_4, P1_6,
# P2, ...; node 1's pod with those annotations.
vx_pods() {
	local i
	for i in 1 2 ${1:-}; do
		if [ "$i" = 1 ]; then
			mn_add 1 vx-p1 "${2:-}"
		else
			mn_add "$i" "vx-p$i"
		fi
		eval "P$i=$MN_POD P${i}_4=$MN_IP4 P${i}_6=$MN_IP6"
	done
}

# vx_cross N M: every check between a pod on node N and one on node M, both families.
vx_cross() {
	local a="P$1" b="P$2" b4="P${2}_4" a6="P${1}_6" mtu
	mtu="$(vx_mtu "${!a}")"
	vx_udp_df "${!b}" "${!b4}" "${!a}" "$mtu"
	vx_udp_df "${!a}" "${!a6}" "${!b}" "$mtu"
	vx_tcp_64k "${!b}" "${!b4}" "${!a}"
	vx_tcp_64k "${!a}" "${!a6}" "${!b}"
	# One byte more than the MTU, fragmentation forbidden: the pod's own MTU refuses it.
	if vx_udp_df "${!b}" "${!b4}" "${!a}" $((mtu + 1)) 2>/dev/null; then
		echo "a $((mtu + 1))-byte DF datagram left a pod whose MTU is $mtu"
		false
	fi
}

@test "routing across subnets: host-gw can't reach the other subnet's pods, and says why" {
	vx_nodes
	vx_velod 1 host-gw
	vx_velod 2 host-gw
	for _ in $(seq 100); do
		grep -q "next hop not on a local link" "$VT/n1/velod.log" && break
		sleep 0.1
	done
	grep -q "10.77.2.0/24 via 192.168.72.2 (node n2): next hop not on a local link" \
		"$VT/n1/velod.log"
	vx_pods
	# host-gw's pods get the node's whole MTU (no encapsulation, no overhead file).
	[ "$(vx_mtu "$P1")" = 1500 ]
	[ ! -e "$VT/n1/state/.routing-overhead" ]
	vx_unreachable "$P1" "$P2_4"
	vx_unreachable "$P1" "$P2_6"
	[ "$(mn_metric 1 'velo_routing_node_path{node="n2",path="host-gw"}')" = "" ]
}

@test "routing across subnets: vxlan tunnels pods' traffic (IPv4, IPv6, MTU-sized and 64 KiB), restarts idempotently, follows the node list, and goes with the mode" {
	local ifindex fdb_before
	vx_nodes
	vx_velod 1 vxlan
	vx_velod 2 vxlan
	mn_wait_route 1 "^10.77.2.0/24 via 10.77.2.0 dev velo.vxlan onlink"
	mn_wait_route 1 "^fd77:2::/64 via fd77:2:: dev velo.vxlan6 .*onlink"
	mn_wait_route 2 "^10.77.1.0/24 via 10.77.1.0 dev velo.vxlan onlink"
	mn_wait_route 2 "^fd77:1::/64 via fd77:1:: dev velo.vxlan6 .*onlink"
	# The device: no learning, the configured port, this node's VTEP address and derived MAC.
	run mn_in 1 ip -d link show velo.vxlan
	echo "$output"
	[[ $output == *"link/ether 02:76:c0:a8:47:01 "* ]]
	[[ $output == *"vxlan id 1 local 192.168.71.1 "* ]]
	[[ $output == *"dstport 4789 "* ]]
	[[ $output == *"nolearning"* ]]
	[[ $output == *" mtu 1450 "* ]]
	run mn_in 1 ip -d link show velo.vxlan6
	[[ $output == *"local fd00:71::1 "* ]]
	[[ $output == *" mtu 1430 "* ]]
	# Node 2's entries: FDB to its VTEP, its gateway's MAC, both derived from its address.
	run mn_in 1 bridge fdb show dev velo.vxlan
	echo "$output"
	[[ $output == *"02:76:c0:a8:48:02 dst 192.168.72.2 self permanent"* ]]
	run mn_in 1 ip neigh show dev velo.vxlan
	[[ $output == *"10.77.2.0 lladdr 02:76:c0:a8:48:02 PERMANENT"* ]]
	[ "$(mn_metric 1 'velo_routing_node_path{node="n2",path="vxlan"}')" = 1 ]
	# ADD leaves room for the IPv6 underlay's 70 bytes (the node has an IPv6 address).
	[ "$(cat "$VT/n1/state/.routing-overhead")" = 70 ]

	# The shipped source guard checks the pods' veths, not the tunnel devices (a NodePort reply
	# comes back through the tunnel with a node's address); the tunnel's rp_filter is loose.
	mn_in 2 nft list table inet velo_guard |
		grep -q 'iifname "velo\*" iifname != { "velo.vxlan", "velo.vxlan6" } fib saddr . iif oif missing'
	[ "$(mn_in 2 sysctl -n net.ipv4.conf.velo/vxlan.rp_filter)" = 2 ]
	vx_pods
	[ "$(vx_mtu "$P1")" = 1430 ]
	[ "$(vx_mtu "$P2")" = 1430 ]
	vx_cross 1 2
	# The inner packet keeps the pod's address: node 2's pod sees node 1's pod, not node 1.
	[ "$(mn_peer "$P2" "$P2_4" "$P1")" = "$P1_4" ]
	[ "$(mn_peer "$P2" "$P2_6" "$P1")" = "$P1_6" ]
	# It crossed encapsulated: the tunnel devices carried it.
	[ "$(mn_in 1 ip -s -j link show velo.vxlan | jq '.[0].stats64.tx.packets')" -gt 10 ]
	[ "$(mn_in 1 ip -s -j link show velo.vxlan6 | jq '.[0].stats64.tx.packets')" -gt 10 ]

	# A restart changes nothing: the same device, the same entries.
	ifindex="$(mn_in 1 ip -j link show velo.vxlan | jq '.[0].ifindex')"
	fdb_before="$(mn_in 1 bridge fdb show dev velo.vxlan | sort)"
	# An address of a pod CIDR this node no longer has (another node's gateway, maybe) goes.
	mn_in 1 ip addr add 10.77.9.0/32 dev velo.vxlan
	vx_stop 1
	vx_velod 1 vxlan
	vx_wait_synced 1
	[ "$(mn_in 1 ip -j link show velo.vxlan | jq '.[0].ifindex')" = "$ifindex" ]
	[ "$(mn_in 1 bridge fdb show dev velo.vxlan | sort)" = "$fdb_before" ]
	run mn_in 1 ip -4 addr show dev velo.vxlan
	echo "$output"
	[[ $output == *"inet 10.77.1.0/32 "* ]]
	[[ $output != *"10.77.9.0"* ]]
	vx_tcp_64k "$P2" "$P2_4" "$P1"

	# Node 2 leaves the list: its route, gateway neighbour and FDB entry go.
	jq '.nodes |= map(select(.name != "n2"))' "$VT/nodes.json" >"$VT/nodes.json.new"
	mv "$VT/nodes.json.new" "$VT/nodes.json"
	mn_wait_route 1 "10.77.2.0/24" absent
	mn_wait_route 1 "fd77:2::/64" absent
	run mn_in 1 bridge fdb show dev velo.vxlan
	[[ $output != *"192.168.72.2"* ]]
	run mn_in 1 ip neigh show dev velo.vxlan
	[[ $output != *"10.77.2.0 "* ]]

	# Back to host-gw: the devices go, and the overhead file with them.
	vx_stop 1
	vx_velod 1 host-gw
	for _ in $(seq 100); do
		mn_in 1 ip link show velo.vxlan >/dev/null 2>&1 || break
		sleep 0.1
	done
	run mn_in 1 ip link show velo.vxlan
	[ "$status" -ne 0 ]
	run mn_in 1 ip link show velo.vxlan6
	[ "$status" -ne 0 ]
	[ ! -e "$VT/n1/state/.routing-overhead" ]
}

@test "routing across subnets: auto routes a node on the shared subnet directly and tunnels to the other, per node in /metrics" {
	local before_redirect before_pass got
	command -v ethtool >/dev/null || skip "ethtool not installed"
	vx_nodes 3
	# Node 1 with the uplink's XDP redirect, which auto allows (its direct nodes cross plain).
	# The router's side of node 1's link sends full checksums, as a wire delivers them (a veth
	# would pass the senders' partial ones, which a redirect can't finish: docs/uplink.md).
	nsenter --net="/run/netns/velotest-mn-ul-$VT_TAG" ethtool -K vtvxu1 tx off >/dev/null
	vx_velod 1 auto '{"uplinkXdp": "ul0"}'
	vx_velod 2 auto
	vx_velod 3 auto
	# Node 3 shares node 1's subnet: host-gw; node 2 doesn't: the tunnel.
	mn_wait_route 1 "^10.77.3.0/24 via 192.168.71.3 dev ul0"
	mn_wait_route 1 "^fd77:3::/64 via fd00:71::3 dev ul0"
	mn_wait_route 1 "^10.77.2.0/24 via 10.77.2.0 dev velo.vxlan onlink"
	mn_wait_route 1 "^fd77:2::/64 via fd77:2:: dev velo.vxlan6 .*onlink"
	mn_wait_route 2 "^10.77.3.0/24 via 10.77.3.0 dev velo.vxlan onlink"
	mn_wait_route 3 "^10.77.1.0/24 via 192.168.71.1 dev ul0"
	[ "$(mn_metric 1 'velo_routing_mode{mode="auto"}')" = 1 ]
	[ "$(mn_metric 1 'velo_routing_node_path{node="n3",path="host-gw"}')" = 1 ]
	[ "$(mn_metric 1 'velo_routing_node_path{node="n2",path="vxlan"}')" = 1 ]
	[ "$(mn_metric 2 'velo_routing_node_path{node="n3",path="vxlan"}')" = 1 ]
	# veloctl status shows the mode and each node's path (from velod's /metrics).
	vt_need_veloctl VX_VELOCTL
	run mn_in 1 "$VX_VELOCTL" --state-dir "$VT/n1/state" --run-dir "$VT/n1/run" \
		--bpffs "$MN_BPFFS-n1" --agent 127.0.0.1:19299 -j status
	[ "$(jq -r '.agent.routing.mode' <<<"$output")" = auto ]
	[ "$(jq -r '.agent.routing.nodes[] | select(.node == "n2") | .path' <<<"$output")" = vxlan ]
	[ "$(jq -r '.agent.routing.nodes[] | select(.node == "n3") | .path' <<<"$output")" = host-gw ]
	run mn_in 1 "$VX_VELOCTL" --state-dir "$VT/n1/state" --run-dir "$VT/n1/run" \
		--bpffs "$MN_BPFFS-n1" --agent 127.0.0.1:19299 status
	echo "$output"
	[[ $output == *"Routing: auto; other nodes routed: 1 host-gw, 1 vxlan"* ]]
	# No FDB entry for the direct node: its packets never enter the tunnel.
	run mn_in 1 bridge fdb show dev velo.vxlan
	[[ $output != *"192.168.71.3"* ]]

	vx_pods 3 '{"velo.dev/fastpath": "xdp"}'
	vx_cross 1 2
	vx_cross 1 3
	vx_cross 3 2
	# The uplink program steps aside for the tunnel: node 2's frames to node 1's XDP pod are
	# UDP to node 1 itself (no_xdp_pod), node 3's direct UDP is redirected into the pod (its TCP
	# takes the stack: docs/uplink.md).
	mn_in 1 ip link show ul0 | grep -q prog/xdp
	before_redirect="$(mn_metric 1 velo_uplink_xdp_redirect_packets_total)"
	before_pass="$(mn_metric 1 'velo_uplink_xdp_pass_packets_total{reason="no_xdp_pod"}')"
	vx_tcp_64k "$P1" "$P1_4" "$P2"
	got="$(mn_udp "$P2" "$P1_4" 5310 100 "$P1")"
	[ "$got" -ge 95 ]
	[ "$(mn_metric 1 velo_uplink_xdp_redirect_packets_total)" = "$before_redirect" ]
	[ "$(mn_metric 1 'velo_uplink_xdp_pass_packets_total{reason="no_xdp_pod"}')" -gt \
		"$((before_pass + 10))" ]
	got="$(mn_udp "$P3" "$P1_4" 5311 100 "$P1")"
	[ "$got" -ge 95 ]
	[ "$(mn_metric 1 velo_uplink_xdp_redirect_packets_total)" -ge "$((before_redirect + 95))" ]
}

@test "routing across subnets: NetworkPolicy judges tunnelled packets by the sending pod (IPv4, IPv6)" {
	local p p4 p6 q q4 q6 b b4 b6 pods pol before
	vx_nodes
	mnp_file "$VT/n2/policy.json" '[]' '[]'
	vx_velod 1 vxlan
	mn_velod 2 "$(jq -cn --arg f "$VT/n2/policy.json" '{routingMode: "vxlan", policySource: "file",
		policyFile: $f, policySyncMs: 50}')"
	mn_wait_route 1 "^10.77.2.0/24 via 10.77.2.0 dev velo.vxlan onlink"
	mn_wait_route 2 "^fd77:1::/64 via fd77:1:: dev velo.vxlan6 .*onlink"

	mnp_add 1 p
	p="$MN_POD" p4="$MN_IP4" p6="$MN_IP6"
	mnp_add 1 q
	q="$MN_POD" q4="$MN_IP4" q6="$MN_IP6"
	mnp_add 2 b
	b="$MN_POD" b4="$MN_IP4" b6="$MN_IP6"
	pods="[$(mnp_pod 1 p "$p4" "$p6"),$(mnp_pod 1 q "$q4" "$q6"),$(mnp_pod 2 b "$b4" "$b6")]"
	# x/b, on node 2, takes connections from x/p only; x/p and x/q both sit on node 1.
	pol='[{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
		"metadata": {"namespace": "x", "name": "b-from-p"},
		"spec": {"podSelector": {"matchLabels": {"pod": "b"}}, "policyTypes": ["Ingress"],
		"ingress": [{"from": [{"podSelector": {"matchLabels": {"pod": "p"}}}]}]}}]'
	before="$(mn_metric 2 velo_policy_syncs_total)"
	mnp_file "$VT/n2/policy.json" "$pods" "$pol"
	mnp_wait_syncs 2 $((${before%.*} + 1))
	mnp_serve "$b" "$b4" 7004
	mnp_serve "$b" "$b6" 7004

	# Through the tunnel both keep their own source: node 2 lets x/p in and keeps x/q out.
	[ "$(mnp_connect "$p" "$b4" 7004)" = ok ]
	[ "$(mnp_connect "$p" "$b6" 7004)" = ok ]
	[ "$(mnp_connect "$q" "$b4" 7004)" = no ]
	[ "$(mnp_connect "$q" "$b6" 7004)" = no ]
	[ "$(mn_in 2 ip -s -j link show velo.vxlan | jq '.[0].stats64.rx.packets')" -gt 0 ]
}

@test "routing across subnets: vxlan over an IPv4-only underlay carries dual-stack pods (IPv6 inside IPv4), through Docker's FORWARD DROP" {
	local i ipt
	command -v iptables-nft >/dev/null || skip "iptables-nft not installed"
	# FORWARD policy DROP on both nodes, as Docker leaves it: velod's accept rules for velo*
	# (forwardAcceptPrefix's default) match the tunnel device, in and out, though the test's
	# pods have vm* veths.
	for i in 1 2; do
		for ipt in iptables-nft ip6tables-nft; do
			mn_in "$i" "$ipt" -P FORWARD DROP
		done
	done
	# The node list has only the nodes' IPv4 addresses: one tunnel, velo.vxlan, for both families.
	vx_nodes
	jq '.nodes |= map(.addresses |= map(select(contains(":") | not)))' "$VT/nodes.json" \
		>"$VT/nodes.json.new"
	mv "$VT/nodes.json.new" "$VT/nodes.json"
	vx_velod 1 vxlan
	vx_velod 2 vxlan
	mn_wait_route 1 "^fd77:2::/64 via fd77:2:: dev velo.vxlan .*onlink"
	mn_wait_route 2 "^fd77:1::/64 via fd77:1:: dev velo.vxlan .*onlink"
	run mn_in 1 ip link show velo.vxlan6
	[ "$status" -ne 0 ]
	run mn_in 1 ip -6 neigh show dev velo.vxlan
	[[ $output == *"fd77:2:: lladdr 02:76:c0:a8:48:02 PERMANENT"* ]]
	# An IPv4 underlay's 50 bytes only.
	[ "$(cat "$VT/n1/state/.routing-overhead")" = 50 ]
	vx_pods
	[ "$(vx_mtu "$P1")" = 1450 ]
	vx_udp_df "$P2" "$P2_6" "$P1" 1450
	vx_tcp_64k "$P2" "$P2_6" "$P1"
	vx_tcp_64k "$P1" "$P1_6" "$P2"
	vx_tcp_64k "$P2" "$P2_4" "$P1"
	mn_in 2 iptables-nft -S FORWARD | grep -q -- '-i velo+ .*-j ACCEPT'
	mn_in 2 iptables-nft -S FORWARD | grep -q -- '-P FORWARD DROP'
}

@test "routing across subnets: flows name the tunnel (path vxlan) for a connection to another node's pod" {
	local mount rel out _
	vt_need_veloctl VX_VELOCTL
	mount="$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)"
	[ -n "$mount" ] || skip "no cgroup2 mount"
	rel="/velotest-$VT_TAG-vxflows"
	mkdir "$mount$rel"
	VX_CGROUP="$mount$rel"
	vx_nodes
	vx_velod 1 vxlan
	vx_velod 2 vxlan
	mn_wait_route 1 "^10.77.2.0/24 via 10.77.2.0 dev velo.vxlan onlink"
	# Node 1's pod reports its connections (sock_ops on its own cgroup).
	mn_add 1 vx-p1 '{"velo.dev/flows": "true"}' "$rel"
	P1=$MN_POD
	mn_add 2 vx-p2
	P2=$MN_POD P2_4=$MN_IP4
	vt_pod "$P2" timeout 20 socat -u TCP4-LISTEN:5002,reuseaddr /dev/null &
	VT_PIDS+=($!)
	vx_wait_bound "$P2" -Hltn 5002
	run vs_in_cgroup "/run/netns/$P1" "$VX_CGROUP" timeout 10 \
		socat -u SYSTEM:"echo hello" "TCP4:$P2_4:5002"
	[ "$status" -eq 0 ]
	for _ in $(seq 100); do
		out="$(mn_in 1 "$VX_VELOCTL" --run-dir "$VT/n1/run" observe -j 2>/dev/null |
			jq -c --arg d "$P2_4" 'select(.dst.ip == $d)')"
		[ "$(grep -c '"kind":"end"' <<<"$out")" -lt 1 ] || break
		sleep 0.1
	done
	echo "$out"
	[ "$(grep -c '"kind":"start"' <<<"$out")" -ge 1 ]
	# The path is known when the connection ends (a start's is "unknown", docs/flows.md).
	[ "$(jq -r 'select(.kind == "end") | .path' <<<"$out" | sort -u)" = vxlan ]
}
