#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# velod on a node whose iptables FORWARD policy is DROP (as Docker leaves it): it puts accept
# rules for the host veths into iptables-nft's "ip filter FORWARD" and "ip6 filter FORWARD"
# (velod/routing/forward.c), once, and warns about a legacy (x_tables) DROP it can't change. The
# chains are made inside the test's node netns; the root namespace's rules are only read.

load ../lib/lib

setup() {
	vt_setup_velo
	vt_need_velod FW_VELOD
	command -v iptables-nft >/dev/null || skip "iptables-nft not installed"
	command -v nft >/dev/null || skip "nft not installed"
	FW_STARTS=0
	fw_reset_tables
}
teardown() {
	fw_stop_velod
	fw_reset_tables
	vt_teardown
}

# The node's tables as a fresh node has them: no nftables table (iptables-nft's, or the guard's
# an earlier velod left), legacy FORWARD accepting.
fw_reset_tables() {
	local table
	for table in "ip filter" "ip6 filter" "inet velo_guard"; do
		# shellcheck disable=SC2086 # family and name
		vt_node nft delete table $table 2>/dev/null || true
	done
	if vt_node grep -qx filter /proc/net/ip_tables_names 2>/dev/null; then
		vt_node iptables-legacy -F FORWARD || true
		vt_node iptables-legacy -P FORWARD ACCEPT || true
	fi
}

# fw_velod [EXTRA_JSON]: velod in the node (its log in $VT/velod.log), merged with EXTRA_JSON;
# returns once its startup, forward rules included, is done (its "started" line).
fw_velod() {
	local _
	jq -n --arg t "$VT" --arg bin "$VT_BIN" --argjson x "${1:-{\}}" '{
		stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: ($t + "/bpffs-unused"),
		cniPath: $bin, listen: "", reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0,
		logLevel: "debug"} + $x' >"$VT/velod.json"
	# nsenter (not a function, which would run in a subshell) execs velod: $! is velod itself.
	nsenter --net="/run/netns/$VT_NODE" "$FW_VELOD" --config "$VT/velod.json" 2>>"$VT/velod.log" &
	FW_PID=$!
	VT_PIDS+=("$FW_PID")
	FW_STARTS=$((FW_STARTS + 1))
	for _ in $(seq 100); do
		[ "$(grep -c 'msg="velod .* started' "$VT/velod.log")" -lt "$FW_STARTS" ] || return 0
		kill -0 "$FW_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "velod did not start; its log:"
	cat "$VT/velod.log"
	return 1
}

fw_stop_velod() {
	[ -n "${FW_PID:-}" ] || return 0
	kill "$FW_PID" 2>/dev/null || true
	wait "$FW_PID" 2>/dev/null || true
	FW_PID=""
}

# fw_count FAMILY COMMENT: how many rules of FAMILY's filter FORWARD carry COMMENT.
fw_count() {
	vt_node nft list chain "$1" filter FORWARD 2>/dev/null | grep -cF "comment \"$2\"" || true
}

# fw_assert_once FAMILY PREFIX: velo's two rules, once each, are the chain's first two.
fw_assert_once() {
	local listing
	listing="$(vt_node nft list chain "$1" filter FORWARD 2>/dev/null)"
	if [ "$(grep -c 'comment "velo: pod traffic' <<<"$listing")" != 2 ] ||
		[ "$(fw_count "$1" "velo: pod traffic from $2*")" != 1 ] ||
		[ "$(fw_count "$1" "velo: pod traffic to $2*")" != 1 ]; then
		echo "$1 filter FORWARD does not hold velo's two rules once each:"
		echo "$listing"
		return 1
	fi
	if ! grep -A2 'type filter hook forward' <<<"$listing" | tail -n 2 |
		grep -c 'velo: pod traffic' | grep -qx 2; then
		echo "velo's rules are not at the top of $1 filter FORWARD:"
		echo "$listing"
		return 1
	fi
}

# fw_others: the node's iptables-nft FORWARD chains (policies and rules) without velo's rules.
fw_others() {
	vt_node iptables-nft -S FORWARD | grep -v 'velo: pod traffic'
	vt_node ip6tables-nft -S FORWARD | grep -v 'velo: pod traffic'
}

# fw_no_ping POD ADDR: ADDR is unreachable from POD (3 pings, 1 s each, all lost).
fw_no_ping() {
	if vt_pod "$1" "${VT_PING[@]}" -q -c 3 -W 1 "$2" >/dev/null 2>&1; then
		echo "pod $1 reached $2, expected the FORWARD chain to drop it"
		return 1
	fi
}

# fw_pods PREFIX: two dual-stack pods whose host veths start with PREFIX; sets FW_A, FW_B and
# their addresses FW_A4, FW_A6, FW_B4, FW_B6.
fw_pods() {
	local conf
	conf="$(vt_config -f dual | jq -c --arg p "$1" '.vethPrefix = $p')"
	FW_A="$(vt_pod_new)"
	FW_B="$(vt_pod_new)"
	vt_add "$FW_A" ctr-a "$conf" || return 1
	FW_A4="$(vt_ip "$VT_RESULT" 4)"
	FW_A6="$(vt_ip "$VT_RESULT" 6)"
	vt_add "$FW_B" ctr-b "$conf" || return 1
	FW_B4="$(vt_ip "$VT_RESULT" 4)"
	FW_B6="$(vt_ip "$VT_RESULT" 6)"
	[ -n "$FW_A4" ] && [ -n "$FW_A6" ] && [ -n "$FW_B4" ] && [ -n "$FW_B6" ]
}

# A Docker-like FORWARD: policy DROP, a user chain jumped to first, a rule of someone else's.
fw_docker_like() {
	local ipt
	for ipt in iptables-nft ip6tables-nft; do
		vt_node "$ipt" -P FORWARD DROP || return 1
		vt_node "$ipt" -N VELOTEST-USER || return 1
		vt_node "$ipt" -A FORWARD -j VELOTEST-USER || return 1
		vt_node "$ipt" -A FORWARD -o lo -m comment --comment "velotest other" -j ACCEPT ||
			return 1
	done
}

# The root namespace's nftables rules (read only; Docker's live there) carry none of velo's.
fw_assert_root_untouched() {
	local n
	n="$(nft list ruleset 2>/dev/null | grep -c 'velo: pod traffic' || true)"
	if [ "$n" != 0 ]; then
		echo "the root namespace has $n of velo's FORWARD rules"
		return 1
	fi
}

@test "FORWARD policy DROP: pods can't talk through the node until velod accepts its host veths (default prefix), once across restarts" {
	local others root_before
	root_before="$(nft list ruleset 2>/dev/null | grep -c 'velo: pod traffic' || true)"
	[ "$root_before" = 0 ]
	fw_docker_like
	others="$(fw_others)"
	# The plugin's and velod's default prefix, "velo": velod's config doesn't name it.
	fw_pods velo

	# The wiring works (the node reaches both pods: OUTPUT, not FORWARD), but pod to pod is
	# forwarded, and the FORWARD policy drops it.
	vt_ping_from_node "$FW_A4"
	vt_ping_from_node "$FW_B6"
	fw_no_ping "$FW_A" "$FW_B4"
	fw_no_ping "$FW_A" "$FW_B6"
	fw_no_ping "$FW_B" "$FW_A4"

	fw_velod
	vt_ping_from_pod "$FW_A" "$FW_B4"
	vt_ping_from_pod "$FW_B" "$FW_A6"
	vt_tcp_transfer "$FW_B" "$FW_B4" "$FW_A" 5001
	vt_tcp_transfer "$FW_A" "$FW_A6" "$FW_B" 5002
	fw_assert_once ip velo
	fw_assert_once ip6 velo

	# Two restarts: still one copy of each rule, at the top.
	fw_stop_velod
	fw_velod
	fw_stop_velod
	fw_velod
	fw_assert_once ip velo
	fw_assert_once ip6 velo
	[ "$(grep -c 'accept rules for velo\* inserted' "$VT/velod.log")" = 2 ]
	[ "$(grep -c "velo's rules as they should be" "$VT/velod.log")" = 4 ]
	vt_tcp_transfer "$FW_B" "$FW_B6" "$FW_A" 5003

	# iptables still reads the chain: velo's rules in its own words, the rest as it was.
	vt_node iptables-nft -S FORWARD | grep -qxF -- '-A FORWARD -i velo+ -m comment --comment "velo: pod traffic from velo*" -j ACCEPT'
	vt_node ip6tables-nft -S FORWARD | grep -qxF -- '-A FORWARD -o velo+ -m comment --comment "velo: pod traffic to velo*" -j ACCEPT'
	[ "$(fw_others)" = "$others" ]
	vt_node iptables-nft -S FORWARD | grep -qx -- '-P FORWARD DROP'
	fw_assert_root_untouched
}

@test "velod puts flushed rules back, replaces stale copies and deletes its rules when forwardAcceptPrefix is empty" {
	local others
	fw_docker_like
	# A stale rule of an earlier velod with another prefix, and a duplicate of today's.
	vt_node nft insert rule ip filter FORWARD iifname '"old*"' counter accept \
		comment '"velo: pod traffic from old*"'
	vt_node nft insert rule ip filter FORWARD iifname '"vt*"' counter accept \
		comment '"velo: pod traffic from vt*"'
	vt_node nft add rule ip filter FORWARD iifname '"vt*"' counter accept \
		comment '"velo: pod traffic from vt*"'
	others="$(fw_others)"
	fw_pods vt

	fw_velod '{"forwardAcceptPrefix": "vt", "sourceGuardPrefix": "vt", "reconcileIntervalSeconds": 1}'
	fw_assert_once ip vt
	fw_assert_once ip6 vt
	[ "$(fw_count ip 'velo: pod traffic from old*')" = 0 ]
	grep -q "ip filter FORWARD (policy drop): accept rules for vt\* inserted at the top (3 earlier" "$VT/velod.log"
	vt_ping_from_pod "$FW_A" "$FW_B4"

	# Someone flushes the chain (a firewall reload): the next pass puts the rules back.
	vt_node iptables-nft -F FORWARD
	local _
	for _ in $(seq 50); do
		[ "$(fw_count ip 'velo: pod traffic from vt*')" = 1 ] && break
		sleep 0.2
	done
	fw_assert_once ip vt
	vt_ping_from_pod "$FW_A" "$FW_B4"
	fw_stop_velod

	# Off: velod deletes its rules and nothing else; the node drops pod traffic again.
	vt_node iptables-nft -A FORWARD -j VELOTEST-USER
	vt_node iptables-nft -A FORWARD -o lo -m comment --comment "velotest other" -j ACCEPT
	fw_velod '{"forwardAcceptPrefix": "", "sourceGuardPrefix": "vt"}'
	[ "$(vt_node nft list ruleset | grep -c 'velo: pod traffic' || true)" = 0 ]
	grep -q "velo's 2 accept rule(s) deleted (off)" "$VT/velod.log"
	[ "$(fw_others)" = "$others" ]
	fw_no_ping "$FW_A" "$FW_B4"
	fw_assert_root_untouched
}

@test "velod creates no iptables table or chain on a node that has none" {
	fw_velod '{"forwardAcceptPrefix": "vt", "sourceGuardPrefix": ""}'
	grep -q "no ip filter FORWARD chain: nothing to do" "$VT/velod.log"
	grep -q "no ip6 filter FORWARD chain: nothing to do" "$VT/velod.log"
	[ -z "$(vt_node nft list tables)" ]
}

@test "velod warns about a legacy (x_tables) FORWARD DROP it can't change, and stops once the documented rules are there" {
	command -v iptables-legacy >/dev/null || skip "iptables-legacy not installed"
	fw_pods vt
	vt_node iptables-legacy -P FORWARD DROP
	fw_no_ping "$FW_A" "$FW_B4"

	fw_velod '{"forwardAcceptPrefix": "vt", "sourceGuardPrefix": "vt"}'
	grep -q "legacy IPv4 iptables (x_tables) filter FORWARD chain has policy DROP and no ACCEPT rules for vt+" "$VT/velod.log"
	# What the warning tells the operator to run.
	# shellcheck disable=SC2016 # the backquotes are the log's
	grep -qF '`iptables-legacy -I FORWARD -i vt+ -j ACCEPT; iptables-legacy -I FORWARD -o vt+ -j ACCEPT`' "$VT/velod.log"
	# It changed nothing of the legacy table's and made no nftables chain for it.
	[ "$(vt_node iptables-legacy -S FORWARD)" = "-P FORWARD DROP" ]
	fw_stop_velod

	vt_node iptables-legacy -I FORWARD -i vt+ -j ACCEPT
	vt_node iptables-legacy -I FORWARD -o vt+ -j ACCEPT
	: >"$VT/velod.log"
	FW_STARTS=0
	fw_velod '{"forwardAcceptPrefix": "vt", "sourceGuardPrefix": "vt"}'
	run grep -c "legacy IPv4 iptables (x_tables) filter FORWARD chain has policy DROP" "$VT/velod.log"
	[ "$output" = 0 ]
	vt_ping_from_pod "$FW_A" "$FW_B4"
	vt_tcp_transfer "$FW_B" "$FW_B4" "$FW_A" 5004
	fw_assert_root_untouched
}
