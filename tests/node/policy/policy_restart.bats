#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2034 # POL_PODS_JSON is read by policy_lib.bash's pol_file
# A velod restart keeps every identity's number (<runDir>/policy/identities): its first write
# finds the maps as they should be and changes nothing, so no moment mixes old numbers with new.
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
