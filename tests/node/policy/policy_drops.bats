#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# velo_pol_drop_v1, policy's drop counters: a pod sending from forged source addresses has its
# drops counted under its own address (reason spoofed), so forged sources can't fill the map,
# and velod removes the counters of addresses no pod of the node has any more. x/a wired by velo
# with "policy": true and selected by a policy, velod reading a policy file.

load ../lib/lib
load ../lib/cgroup_lib
load policy_lib

# The drop map's keys' addresses, one per line (bpftool's hex bytes).
drop_addrs() {
	local map
	map="$(find "$VTC_BPFFS" -name velo_pol_drop_v1 | head -n 1)"
	[ -n "$map" ] || return 1
	bpftool -j map dump pinned "$map" | jq -r '.[] | .key[0:16] | join(" ")' | sort -u
}

@test "spoofed drops count under the pod's own address; a gone pod's counters are removed" {
	local i before own
	command -v socat >/dev/null || skip "socat not installed"
	command -v bpftool >/dev/null || skip "bpftool not installed"
	pol_add x a '{}'
	pol_velod
	pol_apply "[$(pol_np x deny '{"podSelector": {"matchLabels": {"pod": "a"}}}')]"
	# 20 forged sources: addresses x/a isn't given, sent from its netns to the node.
	for i in $(seq 201 220); do
		nsenter --net="/run/netns/${POL_NS[x/a]}" ip addr add "10.99.0.$i/32" dev eth0
		nsenter --net="/run/netns/${POL_NS[x/a]}" socat -u - \
			"UDP4-SENDTO:$VT_NODE_ADDR4:9,bind=10.99.0.$i" <<<"forged" || true
	done
	run pol_metric 'velo_policy_drops_total{pod="x/a",reason="spoofed"}'
	echo "spoofed drops of x/a: $output"
	[ -n "$output" ]
	[ "${output%.*}" -ge 20 ]
	run drop_addrs
	echo "$output"
	[ "$status" -eq 0 ]
	# One address only: x/a's own (::ffff:10.99.0.N), none of the forged ones.
	[ "$(wc -l <<<"$output")" -eq 1 ]
	# shellcheck disable=SC2086 # the address's four numbers
	own="$(printf '0x%02x ' ${POL_IP[x/a]//./ })"
	grep -q "0xff 0xff ${own% }$" <<<"$output"
	# x/a goes: velod's next sync removes its counters.
	before="$(pol_metric velo_policy_syncs_total)"
	vt_cni DEL ctr-x-a "${POL_NS[x/a]}" eth0 "$(pol_conf '{}' "${POL_CG[x/a]}")"
	vt_assert_ok
	pol_wait_sync $((${before%.*} + 1))
	run drop_addrs
	echo "after DEL: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}
