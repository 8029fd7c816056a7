#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2034 # POL_PODS_JSON is read by policy_lib.bash's pol_file
# What velod can't use of the policy objects, and the pods it can't place: a Pod naming a port
# in two containers is placed (each number allowed by a rule naming it), a NetworkPolicy with
# a rule or selector velod can't read isolates what it may select, and each problem and each
# unplaced pod is named with its reason in /metrics and veloctl policy (text and -j). Pods x/a,
# x/b (and x/c) wired by velo with "policy": true, velod reading a policy file.

load ../lib/lib
load ../lib/cgroup_lib
load policy_lib

setup() { pol_setup_ctl; }

# veloctl asks velod over HTTP.
ctl() { pol_ctl --agent "127.0.0.1:$POL_PORT" "$@"; }

# x/b as the API shows it when two containers both name a port "metrics" (TCP 80 and 53).
pod_b_metrics_twice() {
	pol_pod_json x/b | jq -c '.spec.containers = [
		{name: "one", ports: [{name: "metrics", containerPort: 80, protocol: "TCP"}]},
		{name: "two", ports: [{name: "metrics", containerPort: 53, protocol: "TCP"}]}]'
}

@test "a pod naming a port in two containers is placed; a rule naming it allows each number" {
	pol_add x a '{}'
	pol_add x b '{}'
	pol_velod
	POL_PODS_JSON="$(pol_pod_json x/a),$(pod_b_metrics_twice)"
	pol_apply "[$(pol_np x metrics '{"podSelector": {"matchLabels": {"pod": "b"}},
		"ingress": [{"ports": [{"port": "metrics"}]}]}')]"
	vt_run_ok ctl -j policy x/b
	jq -e '.isolation.ingress == true' <<<"$output"
	jq -e '.ingress[0].ports == ["TCP/metrics=53,80"]' <<<"$output"
	jq -e '.problems == []' <<<"$output"
	[ "$(pol_probe_one x/a tcp x/b 80)" = ok ]
	[ "$(pol_probe_one x/a tcp x/b 53)" = ok ]
	[ "$(pol_probe_one x/a udp x/b 80)" = timeout ]
	# The policy gone: the pod is open, not held as policy-pending.
	pol_apply "[]"
	[ "$(pol_probe_one x/a udp x/b 80)" = ok ]
}

@test "a NetworkPolicy rule velod can't read: left out, the pod stays isolated, the policy named" {
	pol_add x a '{}'
	pol_add x b '{}'
	pol_velod
	# Its first rule has a peer with nothing in it (the API refuses that; velod may still see
	# such an object): that rule goes, the second (UDP 53 only) stays.
	pol_apply "[$(pol_np x bad '{"podSelector": {"matchLabels": {"pod": "b"}},
		"ingress": [{"from": [{}]}, {"ports": [{"port": 53, "protocol": "UDP"}]}]}')]"
	[ "$(pol_probe_one x/a tcp x/b 80)" = timeout ]
	[ "$(pol_probe_one x/a udp x/b 53)" = ok ]
	vt_node curl -sf "http://127.0.0.1:$POL_PORT/metrics" >"$VT/metrics"
	grep 'velo_policy_object_errors{kind="NetworkPolicy",namespace="x",name="bad",reason="spec.ingress\[0\]: .*"} 1' \
		"$VT/metrics"
	vt_run_ok ctl policy
	grep -Eq '^x/b +isolated +open +x/bad$' <<<"$output"
	grep -qx 'problems:' <<<"$output"
	grep -q '^  NetworkPolicy x/bad: spec.ingress\[0\]: ' <<<"$output"
	run ctl -j policy x/b
	echo "$output"
	jq -e '.problems | length == 1 and .[0].kind == "NetworkPolicy" and .[0].name == "bad"' \
		<<<"$output"
	grep -q 'policy: NetworkPolicy x/bad: spec.ingress\[0\]' "$VT/velod.log"
}

@test "a NetworkPolicy whose podSelector velod can't read isolates every pod of its namespace" {
	pol_add x a '{}'
	pol_add x b '{}'
	pol_add y a '{}'
	pol_velod
	pol_apply "[$(pol_np x bad '{"podSelector": {"matchExpressions": [{"key": "pod",
		"operator": "In"}]}, "ingress": [{}]}')]"
	[ "$(pol_probe_one x/b tcp x/a 80)" = timeout ]
	[ "$(pol_probe_one x/a tcp x/b 80)" = timeout ]
	[ "$(pol_probe_one x/a tcp y/a 80)" = ok ]
	vt_run_ok ctl policy
	grep -Eq '^x/a +isolated +open +x/bad$' <<<"$output"
	grep -Eq '^x/b +isolated +open +x/bad$' <<<"$output"
	grep -Eq '^y/a +open +open +-$' <<<"$output"
	grep -q '^  NetworkPolicy x/bad: spec.podSelector: unreadable; every pod of namespace x' \
		<<<"$output"
}

@test "a pod velod can't place is named, with why, in /metrics and veloctl policy" {
	pol_add x a '{}'
	pol_velod
	# A policy in x that selects no pod here: ADD gives a new pod of x the programs.
	pol_apply "[$(pol_np x other '{"podSelector": {"matchLabels": {"pod": "b"}}}')]"
	# x/c comes to a namespace with a policy (ADD gives it the programs) but has no Pod object:
	# its traffic waits (policy-pending), and it is named.
	pol_add x c '{}'
	POL_PODS_JSON="$(pol_pod_json x/a)"
	pol_apply "[$(pol_np x other '{"podSelector": {"matchLabels": {"pod": "b"}}}')]"
	[ "$(pol_probe_one x/c tcp x/a 80)" = timeout ]
	vt_node curl -sf "http://127.0.0.1:$POL_PORT/metrics" >"$VT/metrics"
	grep -x 'velo_policy_unplaced_pods{kind="Pod",namespace="x",name="c",reason="no Pod object of this name (yet)"} 1' \
		"$VT/metrics"
	vt_run_ok ctl policy
	grep -qx '  Pod x/c not placed: no Pod object of this name (yet)' <<<"$output"
	vt_run_ok ctl -j policy x/a
	jq -e '.problems == []' <<<"$output"
	run ctl -j policy
	jq -e '.problems | length == 1 and .[0].unplaced == true and .[0].name == "c"' <<<"$output"
	grep -q 'policy: pod x/c not placed' "$VT/velod.log"
	# Once its Pod object comes, it is placed (selected by nothing: open) and named no more.
	POL_PODS_JSON="$(pol_pod_json x/a),$(pol_pod_json x/c)"
	pol_apply "[$(pol_np x other '{"podSelector": {"matchLabels": {"pod": "b"}}}')]"
	run ctl -j policy
	echo "$output"
	jq -e '.problems == []' <<<"$output"
	[ "$(pol_probe_one x/c tcp x/a 80)" = ok ]
}

@test "a ClusterNetworkPolicy velod can't fully read: the rule fails closed, the policy named in /metrics, veloctl and the log" {
	pol_add x a '{}'
	pol_add x b '{}'
	pol_velod
	# An Admin Deny whose peer is empty (the API refuses it): it denies everything into x/b.
	pol_apply "$(pol_tiers '[]' "[$(pol_cnp bad-deny Admin 1 '{"subject": {"pods":
		{"namespaceSelector": {}, "podSelector": {"matchLabels": {"pod": "b"}}}},
		"ingress": [{"action": "Deny", "from": [{}]}]}')]")"
	[ "$(pol_probe_one x/a tcp x/b 80)" = timeout ]
	[ "$(pol_probe_one x/b tcp x/a 80)" = ok ]
	vt_node curl -sf "http://127.0.0.1:$POL_PORT/metrics" >"$VT/metrics"
	grep 'velo_policy_object_errors{kind="ClusterNetworkPolicy",namespace="",name="bad-deny",reason="spec.ingress\[0\]: unreadable (denies all)"} 1' \
		"$VT/metrics"
	vt_run_ok ctl policy
	grep -q '^  ClusterNetworkPolicy bad-deny: spec.ingress\[0\]: unreadable (denies all)$' <<<"$output"
	grep -q 'policy: ClusterNetworkPolicy bad-deny: spec.ingress\[0\]' "$VT/velod.log"
}
