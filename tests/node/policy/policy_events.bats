#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# velod's Kubernetes Events (docs/policy.md, "Objects velod can't use, pods it can't place"): a
# pod of this node velod can't place, a NetworkPolicy it can't read and a pod of this node with
# a field it left out each get one core/v1 Event naming the object (its uid where velod has
# the object) and the reason, posted to the API velod watches (the fake API server,
# k8s_fake_api.bash, which records writes); syncs after that don't post it again, a restarted
# velod doesn't make a second one (409), and a pod placed at last is said again if it is lost.

load ../lib/lib
load ../lib/cgroup_lib
load policy_lib
load ../lib/k8s_fake_api

# shellcheck disable=SC2034 # k8s_fake_api.bash listens on it
K8_PORT=16444

setup_file() { vt_setup_file; }
teardown_file() { vt_teardown_file; }
setup() {
	pol_setup
	command -v openssl >/dev/null || skip "openssl not installed"
	# shellcheck disable=SC2034 # the netns k8s_fake_api.bash's server listens in
	K8_NODE="$VT_NODE"
	K8_API="$VT/api"
	mkdir -p "$K8_API"
	k8_certs
}
teardown() { pol_teardown; }

# pe_velod: velod in the node, every source from the fake API; waits for its first sync.
pe_velod() {
	mkdir -p "$VT/run"
	jq -n --arg t "$VT" --arg b "$VTC_BPFFS" --arg n "$POL_NODE_NAME" \
		--arg l "127.0.0.1:$POL_PORT" --arg k "$K8_API/kubeconfig" '{
		stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: $b, listen: $l,
		reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, reapIntervalMs: 0,
		sourceGuardPrefix: "", nodeName: $n, logLevel: "debug", policySyncMs: 50,
		kubeconfig: $k, routeSyncSeconds: 300, policySource: "api",
		serviceCidrs: ["10.97.0.0/24"]}' >"$VT/velod.json"
	nsenter --net="/run/netns/$VT_NODE" "$POL_VELOD" --config "$VT/velod.json" \
		2>>"$VT/velod.log" &
	POL_VELOD_PID=$!
	pol_wait_sync 1
}

# pe_pod KEY: a grid pod's Pod object as the API serves it, with a uid.
pe_pod() {
	pol_pod_json "$1" | jq -c --arg uid "$(pe_uid "$1")" \
		'. + {kind: "Pod", apiVersion: "v1"} | .metadata.uid = $uid'
}

# pe_uid NAME: a fixed uid for an object of the test.
pe_uid() { echo "00000000-0000-4000-8000-$(printf '%s' "$1" | md5sum | cut -c1-12)"; }

# pe_posts KIND NAME: the Event POSTs about the object KIND x/NAME, one JSON body a line.
pe_posts() {
	jq -c --arg k "$1" --arg n "$2" 'select(.method == "POST" and
		.body.involvedObject.kind == $k and .body.involvedObject.name == $n) | .body' \
		"$K8_API/writes"
}

# pe_wait_posts KIND NAME COUNT: waits (10 s) until COUNT such POSTs were made.
pe_wait_posts() {
	local _
	for _ in $(seq 100); do
		[ "$(pe_posts "$1" "$2" | wc -l)" -ge "$3" ] && return 0
		sleep 0.1
	done
	echo "$3 POST(s) of an Event about $1 x/$2 expected; the API got:"
	cat "$K8_API/writes"
	tail -n 20 "$VT/velod.log"
	return 1
}

# pe_syncs N: N more policy syncs, each after a change the watch brings (a namespace label).
pe_syncs() {
	local i before
	for i in $(seq "$1"); do
		before="$(pol_metric velo_policy_syncs_total)"
		k8_object MODIFIED "$(jq -cn --arg i "$i" '{kind: "Namespace", apiVersion: "v1",
			metadata: {name: "y", labels: {ns: "y", round: $i}}}')"
		pol_wait_sync $((${before%.*} + 1)) || return 1
	done
}

@test "a pod velod can't place and a NetworkPolicy it can't read: one Event each, with the reason, not repeated" {
	local body
	k8_event ADDED "$POL_NODE_NAME" "$VT_NODE_ADDR4" "10.99.0.0/24"
	for ns in x y; do
		k8_object ADDED "$(jq -cn --arg n "$ns" '{kind: "Namespace", apiVersion: "v1",
			metadata: {name: $n, labels: {ns: $n}}}')"
	done
	pol_add x a '{}'
	# x/a is placed, but one of its container ports velod can't read (left out).
	k8_object ADDED "$(pe_pod x/a | jq -c '.spec.containers[0].ports += [{name: "big",
		containerPort: 70000, protocol: "TCP"}]')"
	k8_object ADDED "$(pol_np x other '{"podSelector": {"matchLabels": {"pod": "b"}}}')"
	# Its first rule has a peer with nothing in it: velod leaves the rule out, fails closed.
	k8_object ADDED "$(pol_np x bad '{"podSelector": {"matchLabels": {"pod": "b"}},
		"ingress": [{"from": [{}]}, {"ports": [{"port": 53, "protocol": "UDP"}]}]}' |
		jq -c --arg uid "$(pe_uid x/bad)" '.metadata.uid = $uid')"
	k8_server
	pe_velod
	# x/c: wired in a namespace with policies, but the API has no Pod object for it.
	pol_add x c '{}'
	pe_wait_posts Pod c 1
	pe_wait_posts NetworkPolicy bad 1
	pe_wait_posts Pod a 1

	body="$(pe_posts Pod c)"
	echo "$body"
	jq -e --arg node "$POL_NODE_NAME" '.kind == "Event" and .apiVersion == "v1" and
		.metadata.namespace == "x" and (.metadata.name | startswith("c.velo-")) and
		.involvedObject == {kind: "Pod", apiVersion: "v1", namespace: "x", name: "c"} and
		.type == "Warning" and .reason == "PolicyPodUnplaced" and
		(.message | test("policy-pending.*: no Pod object of this name \\(yet\\)$")) and
		.source == {component: "velod", host: $node} and .count == 1' <<<"$body"
	body="$(pe_posts NetworkPolicy bad)"
	echo "$body"
	jq -e --arg uid "$(pe_uid x/bad)" '.involvedObject == {kind: "NetworkPolicy",
		apiVersion: "networking.k8s.io/v1", namespace: "x", name: "bad", uid: $uid} and
		.reason == "PolicyUnusable" and
		(.message | test("failed closed: spec.ingress\\[0\\]"))' <<<"$body"
	body="$(pe_posts Pod a)"
	echo "$body"
	jq -e --arg uid "$(pe_uid x/a)" '.involvedObject == {kind: "Pod", apiVersion: "v1",
		namespace: "x", name: "a", uid: $uid} and .reason == "PolicyPodFieldsUnusable" and
		(.message | test("spec.containers\\[0\\].ports\\[[0-9]+\\]: bad name"))' <<<"$body"

	# Syncs while both problems stay: no second POST, no PATCH (that waits 30 min).
	run pe_syncs 5
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(pe_posts Pod c | wc -l)" -eq 1 ]
	[ "$(pe_posts NetworkPolicy bad | wc -l)" -eq 1 ]
	[ "$(pe_posts Pod a | wc -l)" -eq 1 ]
	run jq -c 'select(.method != "POST")' "$K8_API/writes"
	[ -z "$output" ]
	grep -q "k8s events: Event x/c.velo-[0-9a-f]* posted" "$VT/velod.log"

	# A restarted velod posts the same name: the API answers 409 and velod leaves it there.
	kill "$POL_VELOD_PID"
	wait "$POL_VELOD_PID" || true
	POL_VELOD_PID=
	pe_velod
	pe_wait_posts Pod c 2
	[ "$(pe_posts Pod c | jq -r .metadata.name | sort -u | wc -l)" -eq 1 ]
	run pe_syncs 3
	[ "$status" -eq 0 ]
	[ "$(pe_posts Pod c | wc -l)" -eq 2 ]
	grep -q "k8s events: x/c.velo-[0-9a-f]* exists: left to the velod that made it" \
		"$VT/velod.log"
}

@test "a pod placed at last is forgotten, and said again when it can't be placed anew; another reason is another Event" {
	k8_event ADDED "$POL_NODE_NAME" "$VT_NODE_ADDR4" "10.99.0.0/24"
	k8_object ADDED '{"kind": "Namespace", "apiVersion": "v1",
		"metadata": {"name": "x", "labels": {"ns": "x"}}}'
	k8_object ADDED "$(pol_np x other '{"podSelector": {"matchLabels": {"pod": "b"}}}')"
	k8_server
	pe_velod
	pol_add x c '{}'
	pe_wait_posts Pod c 1
	# Its Pod object comes: placed, no Event. Then it goes (deleted, the pod still wired).
	k8_object ADDED "$(pe_pod x/c)"
	run pe_syncs 2
	[ "$status" -eq 0 ]
	[ "$(pe_posts Pod c | wc -l)" -eq 1 ]
	# velod matches its problems with what it said once a second: let it see this one gone.
	sleep 2.5
	k8_object DELETED "$(pe_pod x/c)"
	pe_wait_posts Pod c 2
	[ "$(pe_posts Pod c | wc -l)" -eq 2 ]
	# Its Pod object back, scheduled to another node: another reason, another Event, the uid.
	k8_object ADDED "$(pe_pod x/c | jq -c '.spec.nodeName = "node-b"')"
	pe_wait_posts Pod c 3
	pe_posts Pod c | tail -n 1 | jq -e --arg uid "$(pe_uid x/c)" '.involvedObject.uid == $uid and
		.reason == "PolicyPodUnplaced" and
		(.message | test(": its Pod object is scheduled to another node$"))'
	[ "$(pe_posts Pod c | jq -r .metadata.name | sort -u | wc -l)" -eq 2 ]
}
