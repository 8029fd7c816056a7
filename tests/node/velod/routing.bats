#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# velod's routing seam (velod/routing.c) and ADD: a routing backend's encapsulation overhead
# (<stateDir>/.routing-overhead) comes off pods' default MTU; host-gw, which has none, removes
# the file; velod refuses a routingMode it has no backend for. velod runs in the test's node
# netns, serving nothing.

load ../lib/lib

setup_file() { vt_setup_file; }
teardown_file() { vt_teardown_file; }
setup() {
	vt_setup
	vt_velo_only
	RT_VELOD="${VELOD_BIN:-$VELOTEST_REPO/build/velod}"
	[ -x "$RT_VELOD" ] || skip "velod not built (make)"
}
teardown() { vt_teardown; }

# rt_config [ROUTING_MODE]: $VT/velod.json for this test's state, no listener, no passes.
rt_config() {
	jq -n --arg t "$VT" --arg n "$VT_NETWORK" --arg mode "${1:-host-gw}" '{
		network: $n, stateDir: ($t + "/state"), runDir: ($t + "/run"),
		bpffsDir: ($t + "/bpffs-unused"), listen: "", localSocket: "", routingMode: $mode,
		reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, logLevel: "debug"}' \
		>"$VT/velod.json"
}

# rt_mtu POD: the MTU of the pod's eth0 (nsenter keeps the node's /sys: ask ip).
rt_mtu() {
	vt_pod "$1" ip -o link show dev eth0 | sed -n 's/.* mtu \([0-9]*\) .*/\1/p'
}

@test "routing overhead: ADD takes it off the pod's default MTU, a conflist mtu wins, velod with host-gw removes it" {
	local a b c d conf
	conf="$(vt_config -f 4)"
	# No file (velod never ran here): the node's default, 1500 without a default route.
	a="$(vt_pod_new)"
	vt_add "$a" ctr-rt-a "$conf"
	run rt_mtu "$a"
	[ "$output" = 1500 ] || { echo "no overhead: pod MTU $output"; false; }

	# What velod writes for a backend with 50 bytes of encapsulation.
	printf '50\n' >"$VT_STATE/.routing-overhead"
	b="$(vt_pod_new)"
	vt_add "$b" ctr-rt-b "$conf"
	run rt_mtu "$b"
	[ "$output" = 1450 ] || { echo "overhead 50: pod MTU $output"; false; }
	run vt_node ip -o link show dev "$(vt_host_ifname vt ctr-rt-b eth0)"
	[[ "$output" == *" mtu 1450 "* ]] || { echo "overhead 50: host veth $output"; false; }
	# CHECK agrees with what ADD made.
	vt_cni CHECK ctr-rt-b "$b" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
	# The operator's mtu is taken as it is.
	c="$(vt_pod_new)"
	vt_add "$c" ctr-rt-c "$(jq -c '.mtu = 1280' <<<"$conf")"
	run rt_mtu "$c"
	[ "$output" = 1280 ] || { echo "conflist mtu: pod MTU $output"; false; }

	# velod with host-gw (no overhead) removes the file at start.
	rt_config host-gw
	nsenter --net="/run/netns/$VT_NODE" "$RT_VELOD" --config "$VT/velod.json" \
		2>>"$VT/velod.log" &
	VT_PIDS+=("$!")
	for _ in $(seq 50); do
		[ -e "$VT_STATE/.routing-overhead" ] || break
		sleep 0.1
	done
	[ ! -e "$VT_STATE/.routing-overhead" ] || { cat "$VT/velod.log"; false; }
	kill -TERM "${VT_PIDS[-1]}"
	wait "${VT_PIDS[-1]}"
	d="$(vt_pod_new)"
	vt_add "$d" ctr-rt-d "$conf"
	run rt_mtu "$d"
	[ "$output" = 1500 ] || { echo "after velod: pod MTU $output"; false; }
	# Pods wired before keep theirs.
	run rt_mtu "$b"
	[ "$output" = 1450 ]
}

@test "velod refuses a routingMode it has no backend for, naming the ones it has" {
	local rc=0
	rt_config geneve
	vt_node "$RT_VELOD" --config "$VT/velod.json" 2>"$VT/velod.log" || rc=$?
	[ "$rc" -eq 1 ] || { echo "exit $rc"; cat "$VT/velod.log"; false; }
	# The log line quotes its message: the names' quotes come escaped.
	grep -qF 'routingMode \"geneve\" is not a backend velod has (it has \"host-gw\", \"vxlan\", \"auto\")' \
		"$VT/velod.log"
}
