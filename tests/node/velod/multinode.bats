#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A cluster of two nodes on one machine: each node a network namespace with its own velo
# paths (state, locks, bpffs, log) and its own velod, joined by an underlay bridge in a
# third namespace. velod keeps host-gw routes to the other node's pod CIDRs from a static
# node list. Traffic stays inside these namespaces: the nodes have no default route.

load ../lib/lib
load ../lib/multinode_lib

setup() {
	vt_setup
	mn_setup
}
teardown() { mn_teardown; }

# mk_recv6 POD OUT: in the background, POD receives IPv6 UDP on port 9999 for 3 s of quiet and
# writes the distinct payloads it got to OUT (sorted, space-separated; "nothing" if none).
mk_recv6() {
	vt_pod "$1" timeout 6 python3 -c '
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("::", 9999)); s.settimeout(3); got = set()
try:
    while True:
        got.add(s.recv(100).decode())
except socket.timeout:
    pass
print(" ".join(sorted(got)) or "nothing")
' >"$2" &
	VT_PIDS+=($!)
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
	[ "$(mn_metric 1 velo_hostgw_routes)" = 2 ]

	mn_add 1 mn-a1 '{"velo.dev/fastpath": "tc"}'
	a1="$MN_POD" a1_4="$MN_IP4" a1_6="$MN_IP6"
	mn_add 1 mn-b1 '{"velo.dev/fastpath": "tc"}'
	b1="$MN_POD" b1_4="$MN_IP4" b1_6="$MN_IP6"
	mn_add 2 mn-a2
	a2="$MN_POD" a2_4="$MN_IP4" a2_6="$MN_IP6"
	[[ $a1_4 == 10.77.1.* ]]
	[[ $a2_4 == 10.77.2.* ]]

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
	mk_recv6 "$a1" "$VT/work/spoof6"
	sleep 0.5
	# The pod takes B's address on its loopback (as root in its netns may) and sends from it.
	vt_pod "$a2" ip -6 addr add "$b1_6/128" dev lo nodad
	mk_send6 "$a2" "$a2_6" "$b1_6" "$a1_6" 0
	wait "${VT_PIDS[@]: -1}" || true
	echo "pod a1 got over IPv6: $(cat "$VT/work/spoof6")"
	[ "$(cat "$VT/work/spoof6")" = own ]
	mn_in 2 nft list table inet velo_guard |
		grep -q 'iifname "vm\*" iifname != { "velo.vxlan", "velo.vxlan6" } fib saddr . iif oif missing'

	# Node 2 leaves the list: node 1 drops its routes, keeps everything else.
	mn_nodes
	mn_wait_route 1 "10.77.2.0/24" absent
	mn_wait_route 1 "fd77:2::/64" absent
	mn_in 1 ip route show | grep -q "^$a1_4 dev "
}

# mk_send6 POD OWN OTHER DST MARK: POD sends "own" from address OWN and "spoofed" from OTHER
# (three each) to DST, UDP port 9999, its sockets marked MARK (SO_MARK) unless MARK is 0.
mk_send6() {
	vt_pod "$1" python3 - "$2" "$3" "$4" "$5" <<'PY'
import socket, sys
own, other, dst, mark = sys.argv[1:]
for src, payload in ((own, b"own"), (other, b"spoofed")):
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    if int(mark, 0):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, int(mark, 0))
    s.bind((src, 0))
    for _ in range(3):
        s.sendto(payload, (dst, 9999))
PY
}

# mk_guard_count NODE KEYWORD: packets counted by the rule of table inet velo_guard holding KEYWORD.
mk_guard_count() {
	mn_in "$1" nft list chain inet velo_guard prerouting |
		sed -n "/$2/s/.*counter packets \([0-9]*\).*/\1/p"
}

@test "source guard: a tc pod's packets, checked by its program, skip the guard's route lookup and leave it without the mark; a routed pod's own SO_MARK doesn't get a spoofed IPv6 source past it" {
	local a1 a1_4 a1_6 t2 r2 x2_6 before after marked
	mkdir -p "$VT/n1" "$VT/n2"
	mn_underlay
	mn_nodes 2
	mn_velod 1
	mn_velod 2
	mn_wait_route 2 "^10.77.1.0/24 via 192.168.77.1 dev ul0"
	mn_wait_route 2 "^fd77:1::/64 via fd00:77::1 dev ul0"
	mn_add 1 mn-a1
	a1="$MN_POD" a1_4="$MN_IP4" a1_6="$MN_IP6"
	mn_add 2 mn-t2 '{"velo.dev/fastpath": "tc"}'
	t2="$MN_POD"
	mn_add 2 mn-r2
	r2="$MN_POD"
	mn_add 2 mn-x2
	x2_6="$MN_IP6"
	# Node 2 counts forwarded packets that still carry the bit: the guard must have cleared it.
	mn_in 2 nft add table inet velotest_mark
	mn_in 2 nft add chain inet velotest_mark forward '{ type filter hook forward priority filter; }'
	mn_in 2 nft add rule inet velotest_mark forward meta mark and 0x100000 != 0 counter

	before="$(mk_guard_count 2 accept)"
	vt_tcp_transfer "$a1" "$a1_4" "$t2" 5701
	vt_tcp_transfer "$a1" "$a1_6" "$t2" 5702
	after="$(mk_guard_count 2 accept)"
	echo "node 2's guard, packets skipped as checked: $before -> $after"
	# 2 x 4 MiB, GSO'd: well over 100 packets.
	[ "$after" -gt $((before + 100)) ]
	marked="$(mn_in 2 nft list chain inet velotest_mark forward | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')"
	echo "forwarded with the bit still set: $marked"
	[ "$marked" = 0 ]

	# A routed pod marks its socket with the bit (SO_MARK, as root in its netns may) and sends from
	# another pod's IPv6 address: the mark is cleared when the packet leaves the pod's netns, so
	# the guard looks the source up and drops it; its own address gets through.
	mk_recv6 "$a1" "$VT/work/mark6"
	sleep 0.5
	vt_pod "$r2" ip -6 addr add "$x2_6/128" dev lo nodad
	before="$(mk_guard_count 2 drop)"
	mk_send6 "$r2" :: "$x2_6" "$a1_6" 0x100000
	wait "${VT_PIDS[@]: -1}" || true
	echo "pod a1 got over IPv6: $(cat "$VT/work/mark6")"
	[ "$(cat "$VT/work/mark6")" = own ]
	after="$(mk_guard_count 2 drop)"
	echo "node 2's guard drops: $before -> $after"
	[ "$after" -ge $((before + 3)) ]
}
