#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# veloctl policy: what velod's GET /policy says about a pod, as text and -j JSON. Pods x/a and
# y/a wired by velo with "policy": true, velod reading a policy file in which x/from-y lets
# namespace y reach x/a's TCP 80.

load ../lib/lib
load ../lib/cgroup_lib
load policy_lib

setup() { pol_setup_ctl; }

FROM_Y='{"podSelector": {"matchLabels": {"pod": "a"}}, "ingress": [{"from":
	[{"namespaceSelector": {"matchLabels": {"ns": "y"}}}], "ports": [{"port": 80}]}]}'

two_pods_and_policy() {
	pol_add x a '{}'
	pol_add y a '{}'
	pol_velod
	pol_apply "[$(pol_np x from-y "$FROM_Y")]"
}

@test "veloctl policy POD: the selecting policy, isolation and the allow set, as text" {
	two_pods_and_policy
	vt_run_ok pol_ctl policy x/a
	grep -qx 'pod: *x/a' <<<"$output"
	grep -q "addresses: *${POL_IP[x/a]}" <<<"$output"
	grep -qx 'isolated: *ingress yes, egress no' <<<"$output"
	grep -qx '  x/from-y.*' <<<"$output"
	grep -q '^ingress: isolated, allowed:' <<<"$output"
	# The rule names its peer, its port and its policy.
	grep -E '^  from .*ns.*y.* ports .*80.*x/from-y' <<<"$output"
	grep -qx 'egress: not isolated (every peer and port allowed)' <<<"$output"
}

@test "veloctl policy POD: a pod no policy selects is isolated in no direction" {
	two_pods_and_policy
	vt_run_ok pol_ctl policy y/a
	grep -qx 'isolated: *ingress no, egress no' <<<"$output"
	grep -qx 'policies: *none select this pod' <<<"$output"
	grep -qx 'ingress: not isolated (every peer and port allowed)' <<<"$output"
}

@test "veloctl -j policy POD: velod's JSON, isolation and the policy by name" {
	two_pods_and_policy
	vt_run_ok pol_ctl -j policy x/a
	jq -e '.pod == "x/a"' <<<"$output"
	jq -e '.isolation.ingress == true and .isolation.egress == false' <<<"$output"
	jq -e '[.policies[] | select(.namespace == "x" and .name == "from-y")] | length == 1' \
		<<<"$output"
	jq -e '.ingress | length >= 1' <<<"$output"
	jq -e '.egress | length == 0' <<<"$output"
}

@test "veloctl policy: a line per pod of the node; a policy change shows at once" {
	two_pods_and_policy
	vt_run_ok pol_ctl policy
	grep -Eq '^x/a +isolated +open +x/from-y$' <<<"$output"
	grep -Eq '^y/a +open +open +-$' <<<"$output"
	pol_apply "[$(pol_np x from-y "$FROM_Y"),
		$(pol_np y deny '{"podSelector": {}, "policyTypes": ["Egress"]}')]"
	vt_run_ok pol_ctl policy
	grep -Eq '^y/a +open +isolated +y/deny$' <<<"$output"
}

@test "veloctl policy: an unknown pod, a malformed one, no velod" {
	two_pods_and_policy
	run pol_ctl policy x/nope
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q '^Error: policy: velod' <<<"$output"
	run pol_ctl -j policy x/nope
	[ "$status" -eq 1 ]
	jq -e '.error | test("velod")' <<<"$output"
	run pol_ctl policy Nope
	echo "$output"
	[ "$status" -eq 2 ]
	grep -q "is not NAMESPACE/NAME" <<<"$output"
	run pol_ctl policy x/a y/a
	[ "$status" -eq 2 ]
	run vt_node "$POL_CTL" --socket "" --agent "" policy x/a
	[ "$status" -eq 2 ]
	kill "$POL_VELOD_PID"
	wait "$POL_VELOD_PID" || true
	POL_VELOD_PID=
	run pol_ctl policy x/a
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q "velod at $VT/run/velod.sock: No such file" <<<"$output"
}

@test "/policy is velod's local socket's only: veloctl policy asks it, the listen address answers 403" {
	local out
	two_pods_and_policy
	# Every pod's policy names its peers: not for whoever reaches the node's address.
	out="$(vt_node curl -s --max-time 5 -w '\n%{http_code}' "http://127.0.0.1:$POL_PORT/policy?pod=x/a")"
	echo "$out"
	[ "$(tail -n 1 <<<"$out")" = 403 ]
	head -n 1 <<<"$out" | jq -e --arg s "$VT/run/velod.sock" '.error | contains($s)'
	out="$(vt_node curl -s --max-time 5 -w '\n%{http_code}' "http://127.0.0.1:$POL_PORT/policy")"
	[ "$(tail -n 1 <<<"$out")" = 403 ]
	out="$(vt_node curl -s --max-time 5 --unix-socket "$VT/run/velod.sock" 'http://localhost/policy?pod=x/a')"
	jq -e '.pod == "x/a" and .isolation.ingress == true' <<<"$out"
	# veloctl sent to the listen address (--socket ""): velod's refusal, exit 1.
	run vt_node "$POL_CTL" --socket "" --agent "127.0.0.1:$POL_PORT" policy x/a
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q "^Error: policy: velod: /policy is served only on velod's local socket" <<<"$output"
	# VELOD_SOCKET names the socket when --run-dir doesn't.
	run env VELOD_SOCKET="$VT/run/velod.sock" nsenter --net="/run/netns/$VT_NODE" "$POL_CTL" \
		-j policy x/a
	echo "$output"
	[ "$status" -eq 0 ]
	jq -e '.pod == "x/a"' <<<"$output"
}

@test "veloctl policy POD and why: the ClusterNetworkPolicies in tier order, and what decides a flow, side by side" {
	pol_add x a '{}'
	pol_add y a '{}'
	pol_velod
	# Admin: y's TCP 81 denied into x/a; Baseline: everything into x denied; x/from-y allows
	# y on TCP 80.
	pol_apply "$(pol_tiers "[$(pol_np x from-y "$FROM_Y")]" "[$(pol_cnp deny-81 Admin 3 \
		"{\"subject\": {\"namespaces\": $NS_X}, \"ingress\": [{\"action\": \"Deny\",
		\"from\": [{\"namespaces\": $NS_Y}], \"protocols\": [{\"tcp\":
		{\"destinationPort\": {\"number\": 81}}}]}]}"),
		$(pol_cnp floor Baseline 1 "{\"subject\": {\"namespaces\": {}}, \"ingress\":
		[{\"action\": \"Deny\", \"from\": [{\"namespaces\": $NS_X}]}]}")]")"
	vt_run_ok pol_ctl policy x/a
	grep -q '^tiers (first match decides' <<<"$output"
	grep -Eq '^  Admin +priority 3 +deny-81 \(ingress rules 1, egress rules 0\)$' <<<"$output"
	grep -Eq '^  Baseline +priority 1 +floor' <<<"$output"
	vt_run_ok pol_ctl policy why "${POL_IP[y/a]}" "${POL_IP[x/a]}" 81/tcp
	grep -qx 'verdict: dropped' <<<"$output"
	grep -qx "ingress  x/a: DROPPED by Admin tier Admin:deny-81 rule 0 (Deny)" <<<"$output"
	vt_run_ok pol_ctl policy why "${POL_IP[y/a]}" "${POL_IP[x/a]}" 80
	grep -qx 'verdict: allowed' <<<"$output"
	grep -qx "ingress  x/a: allowed by NetworkPolicy x/from-y" <<<"$output"
	grep -qx "egress   y/a: allowed by default (no rule matched)" <<<"$output"
	vt_run_ok pol_ctl -j policy why "${POL_IP[x/a]}" "${POL_IP[y/a]}" 53/udp
	jq -e '.verdict == "dropped" and .ingress.decidedBy == "Baseline tier" and
		.ingress.policy == "Baseline:floor" and .ingress.action == "Deny"' <<<"$output"
	run pol_ctl policy why "${POL_IP[x/a]}" nowhere 80
	[ "$status" -eq 2 ]
}
