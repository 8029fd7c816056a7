#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Pods wired by the plugin talk to each other and to the node: IPv4, IPv6, dual-stack.

load ../lib/lib

@test "two IPv4 pods exchange 4 MiB over TCP intact and the node reaches both" {
	local a b conf ip_a ip_b
	conf="$(vt_config -f 4)"
	vt_pod_add a ip_a "$conf" ctr-a
	vt_pod_add b ip_b "$conf" ctr-b
	[ "$ip_a" != "$ip_b" ]

	vt_ping_from_node "$ip_a"
	vt_ping_from_node "$ip_b"
	vt_tcp_transfer "$a" "$ip_a" "$b" 5001
	vt_tcp_transfer "$b" "$ip_b" "$a" 5002
}

@test "the node forwards pod traffic although its forwarding sysctls started at 0" {
	vt_velo_only
	local a b conf ip_b
	conf="$(vt_config -f dual)"
	vt_pod_add a - "$conf" ctr-a
	vt_pod_add b ip_b "$conf" ctr-b
	# velo turns forwarding on per device, not node-wide: the uplink stays as it was.
	[ "$(vt_node sysctl -n net.ipv4.conf.all.forwarding)" = 0 ]
	[ "$(vt_node sysctl -n net.ipv4.ip_forward)" = 0 ]
	vt_ping_from_pod "$a" "$ip_b"
	vt_ping_from_pod "$a" "$(vt_ip "$VT_RESULT" 6)"
}

@test "two IPv6-only pods exchange data over TCP and the node reaches both" {
	local a b conf ip_a ip_b
	conf="$(vt_config -f 6)"
	vt_pod_add a ip_a "$conf" ctr-a 6
	vt_pod_add b ip_b "$conf" ctr-b 6
	[ -n "$ip_a" ]
	[ -n "$ip_b" ]
	[ "$ip_a" != "$ip_b" ]
	# An IPv6-only pod has no IPv4 address.
	[ -z "$(vt_ip "$VT_RESULT" 4)" ]

	vt_ping_from_node "$ip_a"
	vt_ping_from_node "$ip_b"
	vt_tcp_transfer "$a" "$ip_a" "$b" 5003
}

@test "dual-stack pods get one address of each family and talk over both" {
	local a b conf ip4_a ip6_a ip4_b ip6_b
	conf="$(vt_config -f dual)"
	vt_pod_add a ip4_a "$conf" ctr-a
	ip6_a="$(vt_ip "$VT_RESULT" 6)"
	[ -n "$ip4_a" ]
	[ -n "$ip6_a" ]
	vt_pod_add b ip4_b "$conf" ctr-b
	ip6_b="$(vt_ip "$VT_RESULT" 6)"
	[ "$(jq '.ips | length' <<<"$VT_RESULT")" -eq 2 ]

	vt_ping_from_node "$ip4_b"
	vt_ping_from_node "$ip6_b"
	vt_tcp_transfer "$a" "$ip4_a" "$b" 5004
	vt_tcp_transfer "$b" "$ip6_b" "$a" 5005
}

@test "pod wiring follows the contract: /32 and /128, link-local gateways, permanent neighbours" {
	vt_velo_only
	local pod conf ip4 ip6 host
	conf="$(vt_config -f dual)"
	vt_pod_add pod ip4 "$conf" ctr-wire
	ip6="$(vt_ip "$VT_RESULT" 6)"
	host="$(vt_host_ifname vt ctr-wire eth0)"

	run vt_pod "$pod" ip -4 -o addr show dev eth0
	[[ "$output" == *" $ip4/32 "* ]] || { echo "pod IPv4: $output"; false; }
	run vt_pod "$pod" ip -6 -o addr show dev eth0 scope global
	[[ "$output" == *" $ip6/128 "* ]] || { echo "pod IPv6: $output"; false; }
	[[ "$output" != *tentative* ]] || { echo "IPv6 address still tentative: $output"; false; }

	run vt_pod "$pod" ip -4 route show default
	[[ "$output" == *"via 169.254.1.1 dev eth0"* ]] || { echo "pod v4 default: $output"; false; }
	run vt_pod "$pod" ip -6 route show default
	[[ "$output" == *"via fe80::1 dev eth0"* ]] || { echo "pod v6 default: $output"; false; }
	run vt_pod "$pod" ip neigh show dev eth0
	[[ "$output" == *"169.254.1.1 lladdr $VT_HOST_MAC PERMANENT"* ]] ||
		{ echo "pod neighbours: $output"; false; }
	[[ "$output" == *"fe80::1 lladdr $VT_HOST_MAC PERMANENT"* ]] ||
		{ echo "pod neighbours: $output"; false; }
	[ "$(vt_pod "$pod" sysctl -n net.ipv6.conf.eth0.accept_ra)" = 0 ]

	# Host side: the hashed name, the gateway MAC, /32 and /128 routes (proto 118).
	run vt_node ip -o link show dev "$host"
	[ "$status" -eq 0 ] || { echo "no host veth $host: $(vt_host_links)"; false; }
	[[ "$output" == *"link/ether $VT_HOST_MAC"* ]] || { echo "host veth: $output"; false; }
	run vt_node ip -4 route show "$ip4/32"
	[[ "$output" == *"dev $host proto 118"* ]] || { echo "host v4 route: $output"; false; }
	run vt_node ip -6 route show "$ip6/128"
	[[ "$output" == *"dev $host proto 118"* ]] || { echo "host v6 route: $output"; false; }
	[ "$(vt_node sysctl -n "net.ipv4.conf.$host.forwarding")" = 1 ]
	[ "$(vt_node sysctl -n "net.ipv6.conf.$host.accept_ra")" = 0 ]
}

@test "an IPv4-only pod's host veth has IPv6 off and no IPv6 route; a dual-stack pod's keeps IPv6" {
	vt_velo_only
	local pod4 pod46 ip4 host4 host46
	vt_pod_add pod4 ip4 "$(vt_config -f 4)" ctr-v4only
	host4="$(vt_host_ifname vt ctr-v4only eth0)"
	[ "$(vt_node sysctl -n "net.ipv6.conf.$host4.disable_ipv6")" = 1 ]
	[ "$(vt_node sysctl -n "net.ipv4.conf.$host4.forwarding")" = 1 ]
	[ "$(vt_node sysctl -n "net.ipv4.conf.$host4.rp_filter")" = 1 ]
	run vt_node ip -6 route show table all dev "$host4"
	[ "$status" -eq 0 ]
	[ -z "$output" ] || { echo "IPv6 routes on $host4: $output"; false; }
	run vt_node ip -6 addr show dev "$host4"
	[ -z "$output" ] || { echo "IPv6 addresses on $host4: $output"; false; }
	vt_ping_from_node "$ip4"

	pod46="$(vt_pod_new)"
	vt_add "$pod46" ctr-dual "$(vt_config -f dual)"
	host46="$(vt_host_ifname vt ctr-dual eth0)"
	[ "$(vt_node sysctl -n "net.ipv6.conf.$host46.disable_ipv6")" = 0 ]
	vt_ping_from_node "$(vt_ip "$VT_RESULT" 6)"
	vt_tcp_transfer "$pod46" "$(vt_ip "$VT_RESULT" 4)" "$pod4" 5006
}

@test "the ADD result lists the host veth, the pod interface with its sandbox, ips and routes" {
	vt_velo_only
	local pod conf host
	conf="$(vt_config -f dual)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-result "$conf"
	host="$(vt_host_ifname vt ctr-result eth0)"
	echo "result: $VT_RESULT"
	jq -e --arg host "$host" --arg ns "/run/netns/$pod" '
		.cniVersion == "1.0.0" and
		(.interfaces | length) == 2 and
		.interfaces[0].name == $host and (.interfaces[0].sandbox // "") == "" and
		.interfaces[1].name == "eth0" and .interfaces[1].sandbox == $ns and
		(.interfaces[1].mac | test("^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")) and
		(.ips | length) == 2 and all(.ips[]; .interface == 1) and
		([.routes[].dst] | index("0.0.0.0/0") != null and index("::/0") != null)
	' <<<"$VT_RESULT" >/dev/null
	# The MAC the result reports is the pod interface's. (Not via /sys: nsenter
	# keeps the root namespace's sysfs.)
	run vt_pod "$pod" ip -o link show dev eth0
	[[ "$output" == *"link/ether $(jq -r '.interfaces[1].mac' <<<"$VT_RESULT") "* ]] ||
		{ echo "pod eth0: $output"; false; }
}

@test "ADD answers in the config's cniVersion (0.3.1, 0.4.0, 1.0.0, 1.1.0)" {
	vt_velo_only
	local version pod n=0
	for version in 0.3.1 0.4.0 1.0.0 1.1.0; do
		pod="$(vt_pod_new)"
		vt_add "$pod" "ctr-v$((n++))" "$(vt_config -v "$version" -f dual)"
		echo "$version: $VT_RESULT"
		[ "$(jq -r .cniVersion <<<"$VT_RESULT")" = "$version" ]
		if [ "$version" = 0.3.1 ] || [ "$version" = 0.4.0 ]; then
			# Before 1.0.0 every IP carries its version.
			jq -e '[.ips[].version] | sort == ["4", "6"]' <<<"$VT_RESULT" >/dev/null
		else
			jq -e 'all(.ips[]; has("version") | not)' <<<"$VT_RESULT" >/dev/null
		fi
		vt_ping_from_node "$(vt_ip "$VT_RESULT" 4)"
	done
}

@test "the pod MTU defaults to 1500 on a node without a default route, and follows mtu" {
	vt_velo_only
	local a b
	a="$(vt_pod_new)"
	b="$(vt_pod_new)"
	vt_add "$a" ctr-mtu-a "$(vt_config -f 4)"
	run vt_pod "$a" ip -o link show dev eth0
	[[ "$output" == *" mtu 1500 "* ]] || { echo "pod eth0: $output"; false; }
	vt_add "$b" ctr-mtu-b "$(vt_config -f 4 | jq -c '.mtu = 1280')"
	run vt_pod "$b" ip -o link show dev eth0
	[[ "$output" == *" mtu 1280 "* ]] || { echo "pod eth0: $output"; false; }
	run vt_node ip -o link show dev "$(vt_host_ifname vt ctr-mtu-b eth0)"
	[[ "$output" == *" mtu 1280 "* ]] || { echo "host veth: $output"; false; }
}

@test "the pod MTU defaults to the smallest MTU of the node's IPv4 and IPv6 default-route devices, also when a more specific route covers the probe address" {
	vt_velo_only
	local a b
	# Stand-in uplinks: veth pairs with both ends inside the test node, so nothing leaves it.
	local dev mtu
	for dev in vtup4:1400 vtup6:1380 vtother:1300; do
		mtu="${dev#*:}" dev="${dev%:*}"
		vt_node ip link add "$dev" mtu "$mtu" type veth peer name "${dev}p" mtu "$mtu"
		vt_node ip link set "$dev" up
		vt_node ip link set "${dev}p" up
	done
	vt_node ip route add default dev vtup4
	vt_node ip -6 route add default dev vtup6
	a="$(vt_pod_new)"
	vt_add "$a" ctr-dmtu-a "$(vt_config -f dual)"
	run vt_pod "$a" ip -o link show dev eth0
	[[ "$output" == *" mtu 1380 "* ]] || { echo "pod eth0: $output"; false; }
	# Found by route lookups, without dumping the node's routes.
	if grep "container=ctr-dmtu-a .*route lookup not conclusive" "$VT_LOG"; then false; fi
	# velo's lookup probes 192.0.2.1: a route covering it must not count as a default route.
	vt_node ip route add 192.0.2.0/24 dev vtother
	vt_node ip -6 route add 2001:db8::/32 dev vtother
	vt_node ip link set vtup6p mtu 1450
	vt_node ip link set vtup6 mtu 1450
	b="$(vt_pod_new)"
	vt_add "$b" ctr-dmtu-b "$(vt_config -f dual)"
	run vt_pod "$b" ip -o link show dev eth0
	[[ "$output" == *" mtu 1400 "* ]] || { echo "pod eth0: $output"; false; }
	grep -q "container=ctr-dmtu-b .*route lookup not conclusive" "$VT_LOG"
	vt_node ip link del vtup4
	vt_node ip link del vtup6
	vt_node ip link del vtother
}
