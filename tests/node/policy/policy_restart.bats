#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2034 # POL_PODS_JSON is read by policy_lib.bash's pol_file
# A velod restart keeps every identity's number (<runDir>/policy/identities): its first write
# finds the maps as they should be and changes nothing, so no moment mixes old numbers with new.
# velod keeps the pinned objects open between syncs: pins replaced under it are opened again.
# x/a and x/b wired by velo with "policy": true, velod reading a policy file.

load ../lib/lib
load ../lib/cgroup_lib
load policy_lib

FROM_B='{"podSelector": {"matchLabels": {"pod": "a"}}, "ingress": [{"from":
	[{"podSelector": {"matchLabels": {"pod": "b"}}}]}]}'

@test "a restarted velod numbers identities as before: its first write changes nothing" {
	pol_add x a '{}'
	pol_add x b '{}'
	pol_velod
	pol_apply "[$(pol_np x from-b "$FROM_B")]"
	# Churn: x/b's labels change, so its number is no longer the one a fresh count gives.
	POL_PODS_JSON="$(pol_pod_json x/a),$(pol_pod_json x/b | jq -c '.metadata.labels.v = "2"')"
	pol_apply "[$(pol_np x from-b "$FROM_B")]"
	[ "$(pol_probe_one x/b tcp x/a 80)" = ok ]
	kill "$POL_VELOD_PID"
	wait "$POL_VELOD_PID" || true
	: >"$VT/velod.log"
	nsenter --net="/run/netns/$VT_NODE" "$POL_VELOD" --config "$VT/velod.json" \
		2>>"$VT/velod.log" &
	POL_VELOD_PID=$!
	pol_wait_sync 1
	cat "$VT/velod.log"
	grep -q 'policy: identities as before the restart' "$VT/velod.log"
	run grep -m1 'policy: revision' "$VT/velod.log"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(0 entries written, 0 removed)"* ]]
	[ "$(pol_probe_one x/b tcp x/a 80)" = ok ]
}

# pol_ip_map FIELD: velo_pol_ip_v1's id, or its number of entries (FIELD "entries").
pol_ip_map() {
	if [ "$1" = entries ]; then
		bpftool -j map dump pinned "$VTC_BPFFS/velo_pol_ip_v1" | jq length
	else
		bpftool -j map show pinned "$VTC_BPFFS/velo_pol_ip_v1" | jq -r .id
	fi
}

@test "pins replaced under a running velod: it opens the new ones at its next look and writes them whole" {
	local old entries syncs map
	pol_add x a '{}'
	pol_add x b '{}'
	pol_velod
	pol_apply "[$(pol_np x from-b "$FROM_B")]"
	old="$(pol_ip_map id)"
	entries="$(pol_ip_map entries)"
	[ -n "$old" ]
	[ "$entries" -gt 0 ]
	syncs="$(pol_metric velo_policy_syncs_total)"
	# The policy group's pins go, as when bpffs is emptied under velod; nothing else changes.
	for map in ip sub rule st if ct drop tier; do
		rm "$VTC_BPFFS/velo_pol_${map}_v1"
	done
	rm "$VTC_BPFFS"/progs_g*/velo_pol_{from,to,uplink}
	pol_wait_sync $((${syncs%.*} + 1))
	grep -q 'policy: the pinned BPF objects changed: opening them again' "$VT/velod.log"
	[ "$(pol_ip_map id)" != "$old" ]
	[ "$(pol_ip_map entries)" -eq "$entries" ]
	[ -e "$VTC_BPFFS/velo_pol_tier_v1" ]
}
