#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Service translation from the Kubernetes API: velod (servicesSource "api") watches Services and
# EndpointSlices on a fake API server (k8s_fake_api.bash, HTTPS on the node netns's loopback)
# and writes them into the velo_svc_* maps. An opted-in pod's connects to a ClusterIP reach the
# backend the slices name (checked by digest and by the backend's own socket table); watch
# events move new connects; a deleted Service is no longer translated (kube-proxy's rule, here
# nftables DNAT in the node, takes the connection); nothing is written before both watches have
# listed; a 410 relist converges on the API's state.

load ../lib/lib
load ../lib/cgroup_lib
load ../lib/services_lib
load ../lib/k8s_fake_api

VIP4=10.96.0.10
# shellcheck disable=SC2034 # k8s_fake_api.bash listens on it
K8_PORT=16443

setup() {
	svc_setup
	command -v openssl >/dev/null || skip "openssl not installed"
	command -v ss >/dev/null || skip "ss not installed (iproute2)"
	# shellcheck disable=SC2034 # the netns k8s_fake_api.bash's server listens in
	K8_NODE="$VT_NODE"
	K8_API="$VT/api"
	mkdir -p "$K8_API"
	k8_certs
}

# Two backend pods: A serves on 8080 (svc_server), B on 8081, so a backend is told apart by
# the port its socket table shows. P_* come from svc_pod.
# shellcheck disable=SC2153
backends() {
	svc_pod be-a '{}'
	A_NS="$P_NS" A4="$P_IP4"
	svc_server "$A_NS" "$P_CG"
	svc_pod be-b '{}'
	B_NS="$P_NS" B4="$P_IP4"
	svc_peer_in "$B_NS" "$P_CG" "$VT/work/server-b.log" server 8081 5354
}

# sw_service and sw_slice: the services_lib objects as the API serves them (kind set).
sw_service() {
	svc_service web "$VIP4" -- "$SVC_HTTP" | jq -c '. + {kind: "Service", apiVersion: "v1"}'
}
sw_slice() {
	svc_slice web-x web IPv4 "[{\"name\": \"http\", \"port\": $2}]" "$1" |
		jq -c '. + {kind: "EndpointSlice", apiVersion: "discovery.k8s.io/v1"}'
}

# sw_velod: velod in the node with every source from the fake API.
sw_velod() {
	mkdir -p "$VT/run"
	jq -n --arg t "$VT" --arg b "$VTC_BPFFS" --arg n "$SVC_NODE" --arg l "127.0.0.1:$SVC_PORT" \
		--arg k "$K8_API/kubeconfig" '{
		stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: $b, listen: $l,
		reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, reapIntervalMs: 0,
		sourceGuardPrefix: "", kubeconfig: $k, routeSyncSeconds: 300,
		servicesSource: "api", servicesSyncMs: 50, nodeName: $n, logLevel: "debug"}' \
		>"$VT/velod.json"
	nsenter --net="/run/netns/$VT_NODE" "$SVC_VELOD" --config "$VT/velod.json" \
		2>>"$VT/velod.log" &
	# shellcheck disable=SC2034 # svc_teardown stops it
	SVC_VELOD_PID=$!
}

# sw_backends: the ClusterIP's backends in the maps as "ADDR:PORT ..." (veloctl services).
sw_backends() {
	svc_ctl -j services 2>/dev/null | jq -r --arg v "$VIP4" '[.servicePorts[]? |
		select(.clusterIP == $v) | .backends[] | "\(.address):\(.port)"] | join(" ")'
}

# sw_wait_backends EXPECTED: waits until the maps hold exactly that.
sw_wait_backends() {
	local _ now
	for _ in $(seq 100); do
		now="$(sw_backends)"
		[ "$now" = "$1" ] && return 0
		sleep 0.05
	done
	echo "backends of $VIP4: '$now', expected '$1'; velod log:"
	tail -n 20 "$VT/velod.log"
	return 1
}

# sw_connect BACKEND_NS PORT: the client pod connects to the ClusterIP, the digest comes back,
# and while it holds the connection the backend's netns has it established on PORT.
sw_connect() {
	local out="$VT/work/client-$RANDOM.out" sent got _
	svc_client "$C_NS" "$C_CG" tcp "$VIP4" 80 65536 2 >"$out" 2>&1 &
	VT_PIDS+=($!)
	for _ in $(seq 100); do
		grep -q '^got' "$out" && break
		sleep 0.05
	done
	cat "$out"
	grep -qx "peer $VIP4 80" "$out" || return 1
	sent="$(awk '$1 == "sent" { print $2 }' "$out")"
	got="$(awk '$1 == "got" { print $2 }' "$out")"
	[ -n "$sent" ] && [ "$sent" = "$got" ] || return 1
	nsenter --net="/run/netns/$1" ss -Htn state established "( sport = :$2 )" | tee /dev/stderr |
		grep -q "$C4"
}

# sw_start [CONTROL_FILE]: the backends, the web Service with its slice naming A in the API's
# log, the fake API (CONTROL_FILE, e.g. fail-list-endpointslices, in place first), velod, and
# an opted-in client pod (C_*).
# shellcheck disable=SC2153 # P_* come from svc_pod
sw_start() {
	backends
	k8_object ADDED "$(sw_service)"
	k8_object ADDED "$(sw_slice "$A4" 8080)"
	[ -z "${1:-}" ] || touch "$K8_API/$1"
	k8_server
	sw_velod
	svc_pod client "$SVC_ON"
	C_NS="$P_NS" C_CG="$P_CG" C4="$P_IP4"
}

@test "services_watch: a ClusterIP from the API reaches its backend; a slice change moves new connects; a deleted Service goes to kube-proxy" {
	sw_start
	# kube-proxy's rule for the VIP points at B: taken only by untranslated connections.
	svc_kube_proxy ip "$VIP4" tcp 80 "$B4" 8081
	sw_wait_backends "$A4:8080"
	sw_connect "$A_NS" 8080
	[ "$(svc_kp_packets)" -eq 0 ]

	# The slice's endpoint replaced by a MODIFIED event: new connects go to B.
	k8_object MODIFIED "$(sw_slice "$B4" 8081)"
	sw_wait_backends "$B4:8081"
	sw_connect "$B_NS" 8081
	[ "$(svc_kp_packets)" -eq 0 ]
	grep -q "services: 1 service ports, 1 backends (0 added, 1 changed" "$VT/velod.log"

	# The Service deleted: its ClusterIP is no longer translated, kube-proxy's rule takes it.
	k8_object DELETED "$(sw_service)"
	sw_wait_backends ""
	[ "$(svc_ctl -j services | jq '.servicePorts | length')" -eq 0 ]
	sw_connect "$B_NS" 8081
	[ "$(svc_kp_packets)" -gt 0 ]
	# One LIST each: every change came by the watch.
	[ "$(grep -c 'endpointslices?limit=' "$K8_API/requests.log")" -eq 1 ]
	[ "$(grep -c 'services?limit=' "$K8_API/requests.log")" -eq 1 ]
	[ "$(svc_metric 'velo_k8s_service_lists_total{resource="services"}')" -eq 1 ]
	[ "$(svc_metric 'velo_k8s_service_objects{resource="services"}')" -eq 0 ]
	[ "$(svc_metric 'velo_k8s_service_objects{resource="endpointslices"}')" -eq 1 ]
}

@test "services_watch: nothing is written before both watches have listed" {
	local _ kp
	sw_start fail-list-endpointslices
	svc_kube_proxy ip "$VIP4" tcp 80 "$B4" 8081
	# Services listed; the EndpointSlice LIST failed twice (500, backoff).
	for _ in $(seq 100); do
		grep -q "k8s services: listed 1" "$VT/velod.log" &&
			[ "$(grep -c 'endpointslices?limit=' "$K8_API/requests.log")" -ge 2 ] && break
		sleep 0.05
	done
	grep -q "k8s services: listed 1" "$VT/velod.log"
	[ "$(grep -c 'endpointslices?limit=' "$K8_API/requests.log")" -ge 2 ]
	# No Service was written without its slices (it would refuse the connect): the ClusterIP
	# is still untranslated and kube-proxy's rule takes the connection.
	run grep -E "services: [0-9]+ service ports" "$VT/velod.log"
	[ "$status" -eq 1 ]
	sw_connect "$B_NS" 8081
	kp="$(svc_kp_packets)"
	[ "$kp" -gt 0 ]

	rm "$K8_API/fail-list-endpointslices"
	sw_wait_backends "$A4:8080"
	sw_connect "$A_NS" 8080
	[ "$(svc_kp_packets)" -eq "$kp" ]
}

# sw_healthz: velod's /healthz status code and body on one line.
sw_healthz() {
	vt_node curl -s --max-time 5 -w ' %{http_code}' "http://127.0.0.1:$SVC_PORT/healthz" | tr -d '\n'
}

@test "services_watch: /healthz says not ready until the first EndpointSlice LIST is in the maps" {
	local _ health
	sw_start fail-list-endpointslices
	# Services and Nodes listed, the EndpointSlice LIST withheld (500, backoff): not ready.
	for _ in $(seq 100); do
		grep -q "k8s services: listed 1" "$VT/velod.log" &&
			[ "$(grep -c 'endpointslices?limit=' "$K8_API/requests.log")" -ge 2 ] && break
		sleep 0.05
	done
	[ "$(grep -c 'endpointslices?limit=' "$K8_API/requests.log")" -ge 2 ]
	[ -n "$(svc_metric velo_k8s_node_lists_total)" ]
	[ "$(svc_metric velo_k8s_node_lists_total)" -ge 1 ]
	health="$(sw_healthz)"
	echo "healthz: $health"
	[[ "$health" == *" 503" ]]
	[[ "$health" == *"Services and EndpointSlices"* ]]
	[ "$(sw_backends)" = "" ]

	# The LIST let through: ready once, and only once, the maps hold the backend.
	rm "$K8_API/fail-list-endpointslices"
	for _ in $(seq 100); do
		health="$(sw_healthz)"
		[[ "$health" == *" 200" ]] && break
		sleep 0.05
	done
	echo "healthz: $health"
	[ "$health" = "ok 200" ]
	[ "$(sw_backends)" = "$A4:8080" ]
}

@test "services_watch: an ERROR 410 relists and converges on a change the watch never carried" {
	local _ events before
	sw_start
	sw_wait_backends "$A4:8080"
	sw_connect "$A_NS" 8080

	# History rewritten under the watch (same length, so the watch sends nothing): the slice
	# now names B. Only a LIST can see it; the ERROR 410 forces one.
	jq -c --argjson s "$(sw_slice "$B4" 8081)" \
		'if .object.kind == "EndpointSlice" then .object = $s else . end' \
		"$K8_API/events" >"$K8_API/events.new"
	mv "$K8_API/events.new" "$K8_API/events"
	# Two bookmarks (one a second) arrive after it, and the maps still say A.
	events='velo_k8s_service_watch_events_total{resource="endpointslices"}'
	before="$(svc_metric "$events")"
	[ -n "$before" ]
	for _ in $(seq 100); do
		[ "$(svc_metric "$events")" -ge $((before + 2)) ] && break
		sleep 0.05
	done
	[ "$(svc_metric "$events")" -ge $((before + 2)) ]
	[ "$(sw_backends)" = "$A4:8080" ]
	k8_bump expire
	sw_wait_backends "$B4:8081"
	grep -q "k8s endpointslices: resourceVersion .* (410 Gone): relisting" "$VT/velod.log"
	[ "$(svc_metric 'velo_k8s_service_relists_total{resource="endpointslices"}')" -ge 1 ]
	[ "$(grep -c 'endpointslices?limit=' "$K8_API/requests.log")" -eq 2 ]
	sw_connect "$B_NS" 8081
}
