#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Chaining: the reference portmap plugin (1.1.1, iptables) fed the plugin's result
# as prevResult, as a runtime runs a conflist [velo, portmap].

load ../lib/lib

teardown() {
	if [ -n "${VT:-}" ]; then
		# Whatever a failed test left: rules, then portmap's chains.
		vt_node iptables -t nat -F >/dev/null 2>&1 || true
		vt_node iptables -t nat -X >/dev/null 2>&1 || true
		vt_node ip6tables -t nat -F >/dev/null 2>&1 || true
		vt_node ip6tables -t nat -X >/dev/null 2>&1 || true
	fi
	vt_teardown
}

# portmap_config CONFIG PREV: the portmap entry of the chain, publishing 8080 -> 80.
portmap_config() {
	jq -c --argjson prev "$2" '{
		cniVersion: .cniVersion, name: .name, type: "portmap", snat: true,
		capabilities: {portMappings: true},
		runtimeConfig: {portMappings: [{hostPort: 8080, containerPort: 80, protocol: "tcp"}]},
		prevResult: $prev}' <<<"$1"
}

# The NAT rules portmap made for a published port 8080.
nat_rules() {
	vt_node iptables -t nat -S | grep -E -- '--dport 8080|CNI-DN-' || true
}

@test "portmap chained after the plugin publishes a pod port, and its DEL removes the rules" {
	local conf a b ip_a add_a pm_result
	conf="$(vt_config -f 4)"
	vt_pod_add a ip_a "$conf" ctr-web
	add_a="$VT_RESULT"
	vt_pod_add b - "$conf" ctr-client

	# portmap gets the plugin's result and must pass it on unchanged.
	VT_EXEC="$VT_BIN/portmap" vt_cni ADD ctr-web "$a" eth0 "$(portmap_config "$conf" "$add_a")"
	vt_assert_ok
	pm_result="$VT_OUT"
	[ "$(jq -c '.ips' <<<"$pm_result")" = "$(jq -c '.ips' <<<"$add_a")" ]
	run nat_rules
	echo "$output"
	[[ "$output" == *"--dport 8080"* ]]
	[[ "$output" == *"$ip_a:80"* ]]

	# Pod B reaches pod A through the node's published port; the data arrives intact.
	vt_tcp_transfer "$a" "$ip_a" "$b" 80 "$VT_NODE_ADDR4" 8080

	# CHECK of the whole chain (prevResult = portmap's result).
	vt_cni CHECK ctr-web "$a" eth0 "$(vt_with_prev "$conf" "$pm_result")"
	vt_assert_ok

	# DEL in reverse order: portmap, then the plugin.
	VT_EXEC="$VT_BIN/portmap" vt_cni DEL ctr-web "$a" eth0 "$(portmap_config "$conf" "$pm_result")"
	vt_assert_ok
	run nat_rules
	[ -z "$output" ] || { echo "rules left: $output"; false; }
	vt_cni DEL ctr-web "$a" eth0 "$(vt_with_prev "$conf" "$pm_result")"
	vt_assert_ok
	vt_cni DEL ctr-client "$b" eth0 "$conf"
	vt_assert_ok
	vt_assert_nothing_left
}

@test "portmap chained after a dual-stack ADD publishes the port for both families" {
	local conf a ip6
	conf="$(vt_config -f dual)"
	vt_pod_add a ip6 "$conf" ctr-web6 6
	VT_EXEC="$VT_BIN/portmap" vt_cni ADD ctr-web6 "$a" eth0 "$(portmap_config "$conf" "$VT_RESULT")"
	vt_assert_ok
	run vt_node ip6tables -t nat -S
	[[ "$output" == *"--dport 8080"* ]] || { echo "$output"; false; }
	[[ "$output" == *"[$ip6]:80"* ]] || { echo "$output"; false; }
	VT_EXEC="$VT_BIN/portmap" vt_cni DEL ctr-web6 "$a" eth0 "$(portmap_config "$conf" "$VT_RESULT")"
	vt_assert_ok
	run vt_node ip6tables -t nat -S
	[[ "$output" != *"--dport 8080"* ]] || { echo "$output"; false; }
}
