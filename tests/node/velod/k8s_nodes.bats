#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# velod's Node watch: host-gw routes from the Kubernetes API. A fake API server
# (k8s_fake_api.bash: python3, HTTPS with a CA made here by openssl) answers LIST and WATCH /api/v1/nodes on the loopback of
# a node netns; the test drives it through files in $VT/api (events appended to a log, a
# connection drop, a 410 Gone, a token rotation). velod runs in that netns with an underlay
# veth to a peer netns, so the other nodes' addresses are on-link next hops. No traffic leaves
# these namespaces: the API is on their loopback, the routes are only looked at.

load ../lib/lib
load ../lib/k8s_fake_api

K8_PORT=16443
K8_HTTP=19399

setup() {
	vt_setup_velo
	vt_need_velod K8_VELOD
	command -v openssl >/dev/null || skip "openssl not installed"
	command -v curl >/dev/null || skip "curl not installed"
	K8_NODE="velotest-k8s-node-$VT_TAG"
	K8_PEER="velotest-k8s-peer-$VT_TAG"
	K8_API="$VT/api"
	mkdir -p "$K8_API"
	k8_netns
	k8_certs
}
teardown() {
	vt_teardown
	ip netns del "$K8_NODE" 2>/dev/null || true
	ip netns del "$K8_PEER" 2>/dev/null || true
	return 0
}

k8_in() { nsenter --net="/run/netns/$K8_NODE" "$@"; }

# The node (192.168.78.1, fd00:78::1) and a peer on one veth: other nodes' addresses are on-link.
k8_netns() {
	ip netns add "$K8_NODE"
	ip netns add "$K8_PEER"
	ip link add vtk8s0 netns "$K8_NODE" type veth peer name vtk8s1 netns "$K8_PEER"
	ip -n "$K8_NODE" link set lo up
	ip -n "$K8_NODE" addr add 192.168.78.1/24 dev vtk8s0
	ip -n "$K8_NODE" addr add fd00:78::1/64 dev vtk8s0 nodad
	ip -n "$K8_NODE" link set vtk8s0 up
	ip -n "$K8_PEER" addr add 192.168.78.254/24 dev vtk8s1
	ip -n "$K8_PEER" link set vtk8s1 up
}

# k8_velod [inCluster]: velod in the node netns with the API source; routeSyncSeconds is long,
# so routes that follow an event within the wait below came from the watch.
k8_velod() {
	local source
	# shellcheck disable=SC2016 # jq's variable, expanded by jq
	source='{kubeconfig: ($a + "/kubeconfig")}'
	[ "${1:-}" = inCluster ] && source='{inCluster: true}'
	jq -n --arg t "$VT" --arg a "$K8_API" --arg bin "$VT_BIN" \
		--arg listen "127.0.0.1:$K8_HTTP" "{stateDir: (\$t + \"/state\"),
		runDir: (\$t + \"/run\"), bpffsDir: (\$t + \"/bpffs-unused\"), cniPath: \$bin,
		listen: \$listen, reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0,
		sourceGuardPrefix: \"\", routeSyncSeconds: 300, logLevel: \"debug\"} + $source" \
		>"$VT/velod.json"
	if [ "${1:-}" = inCluster ]; then
		# The service account's files where a pod has them, in a mount namespace of velod's own.
		mkdir -p "$VT/sa"
		cp "$K8_API/ca.crt" "$K8_API/token" "$VT/sa/"
		# nsenter, env, unshare and sh all exec: $! is velod.
		# shellcheck disable=SC2016 # sh's positional parameters
		nsenter --net="/run/netns/$K8_NODE" env NODE_NAME=vt-self \
			KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$K8_PORT" unshare -m sh -c '
			mount -t tmpfs vtk8s /run &&
			mkdir -p /run/secrets/kubernetes.io/serviceaccount &&
			mount --bind "$1" /run/secrets/kubernetes.io/serviceaccount &&
			exec "$2" --config "$3"' sh "$VT/sa" "$K8_VELOD" "$VT/velod.json" \
			2>>"$VT/velod.log" &
	else
		# nsenter execs velod, so $! is velod itself.
		NODE_NAME=vt-self nsenter --net="/run/netns/$K8_NODE" "$K8_VELOD" \
			--config "$VT/velod.json" 2>>"$VT/velod.log" &
	fi
	VT_PIDS+=($!)
}

k8_show() {
	echo "routes (proto 118):"
	k8_in ip route show proto 118 table all
	k8_in ip -6 route show proto 118 table all
	echo "velod log:"
	tail -n 30 "$VT/velod.log"
	echo "requests:"
	tail -n 10 "$K8_API/requests.log" 2>/dev/null
}

# k8_wait_route PATTERN [absent [SECONDS]]: waits (default 2 s) for a velo route to (not) match.
k8_wait_route() {
	local i
	for i in $(seq $((${3:-2} * 20))); do
		if { k8_in ip route show proto 118; k8_in ip -6 route show proto 118; } | grep -q "$1"; then
			[ "${2:-}" != absent ] && return 0
		else
			[ "${2:-}" = absent ] && return 0
		fi
		sleep 0.05
	done
	echo "route '$1' still ${2:-missing} after ${3:-2} s (waited $i x 50 ms)"
	k8_show
	return 1
}

k8_healthz() { k8_in curl -s -o /dev/null -w '%{http_code}' --max-time 3 "http://127.0.0.1:$K8_HTTP/healthz"; }
k8_metric() {
	k8_in curl -sf --max-time 3 "http://127.0.0.1:$K8_HTTP/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}

# k8_wait_healthz CODE SECONDS
k8_wait_healthz() {
	local i
	for i in $(seq $(($2 * 10))); do
		[ "$(k8_healthz)" = "$1" ] && return 0
		sleep 0.1
	done
	echo "healthz: $(k8_healthz), wanted $1"
	k8_show
	return 1
}

@test "Node watch: routes follow LIST, ADDED, MODIFIED, DELETED; own CIDR never routed; healthz waits for the first LIST" {
	k8_event ADDED vt-self "192.168.78.1 fd00:78::1" "10.78.1.0/24 fd78:1::/64"
	k8_event ADDED vt-a "192.168.78.2 fd00:78::2" "10.78.2.0/24 fd78:2::/64"
	k8_event ADDED vt-b "192.168.78.3" "10.78.3.0/24"
	# Claims part of this node's CIDR: never routed away.
	k8_event ADDED vt-thief "192.168.78.9" "10.78.1.128/25"
	k8_event ADDED vt-nocidr "192.168.78.10" ""
	touch "$K8_API/fail-list"
	k8_server
	k8_velod

	# LIST fails (HTTP 500): not ready, and healthz says why.
	k8_wait_healthz 503 5
	sleep 1
	[ "$(k8_healthz)" = 503 ]
	k8_in curl -s "http://127.0.0.1:$K8_HTTP/healthz" | grep -q "first Node LIST.*HTTP 500"
	[ -z "$(k8_in ip route show proto 118)" ]
	rm "$K8_API/fail-list"
	k8_wait_healthz 200 10

	# From the LIST (three pages): the other nodes' CIDRs via their InternalIPs.
	k8_wait_route "^10.78.2.0/24 via 192.168.78.2 dev vtk8s0"
	k8_wait_route "^fd78:2::/64 via fd00:78::2 dev vtk8s0"
	k8_wait_route "^10.78.3.0/24 via 192.168.78.3 dev vtk8s0"
	if { k8_in ip route show proto 118; k8_in ip -6 route show proto 118; } |
		grep -q "10.78.1.\|fd78:1::\|203.0.113"; then
		echo "routed this node's CIDR or via an ExternalIP:"
		k8_show
		false
	fi
	grep -q "which is this node's: not routed" "$VT/velod.log"
	grep -q "continue=.*%3D" "$K8_API/requests.log" # the token's "=" escaped
	grep -q "watch=1&resourceVersion=105&allowWatchBookmarks=true" "$K8_API/requests.log"
	[ "$(k8_metric velo_hostgw_routes)" = 3 ]
	[ "$(k8_metric velo_k8s_nodes)" = 5 ]

	# Watch events: a new node, a moved CIDR and address, a deletion; each within 2 s.
	k8_event ADDED vt-c "192.168.78.4 fd00:78::4" "10.78.4.0/24 fd78:4::/64"
	k8_wait_route "^10.78.4.0/24 via 192.168.78.4 dev vtk8s0"
	k8_wait_route "^fd78:4::/64 via fd00:78::4 dev vtk8s0"
	k8_event MODIFIED vt-a "192.168.78.5 fd00:78::2" "10.78.20.0/24 fd78:2::/64"
	k8_wait_route "^10.78.20.0/24 via 192.168.78.5 dev vtk8s0"
	k8_wait_route "^10.78.2.0/24" absent
	k8_wait_route "^fd78:2::/64 via fd00:78::2 dev vtk8s0"
	k8_event DELETED vt-b "192.168.78.3" "10.78.3.0/24"
	k8_wait_route "^10.78.3.0/24" absent
	# This node's own CIDR changes: its old one may now be routed, its new one never.
	k8_event MODIFIED vt-self "192.168.78.1 fd00:78::1" "10.78.9.0/24 fd78:1::/64"
	k8_wait_route "^10.78.1.128/25 via 192.168.78.9 dev vtk8s0"
	k8_event ADDED vt-claims-new "192.168.78.11" "10.78.9.0/24"
	sleep 1
	if k8_in ip route show proto 118 | grep -q "10.78.9.0"; then k8_show; false; fi

	# An event velod can't use (a bad CIDR) leaves the list as it was; the watch carries on.
	jq -cn --argjson o "$(k8_node vt-c "192.168.78.4" "10.78.4.1/24")" '{type: "MODIFIED", object: $o}' \
		>>"$K8_API/events"
	k8_event ADDED vt-d "192.168.78.6" "10.78.6.0/24"
	k8_wait_route "^10.78.6.0/24 via 192.168.78.6 dev vtk8s0"
	k8_wait_route "^10.78.4.0/24 via 192.168.78.4 dev vtk8s0"
	grep -q "vt-c: bad spec.podCIDRs entry" "$VT/velod.log"
	[ "$(k8_metric velo_k8s_node_lists_total)" = 1 ]
	[ "$(k8_metric velo_k8s_watch_restarts_total)" = 0 ]
	[ "$(k8_healthz)" = 200 ]
}

@test "Node watch: 410 Gone relists, a dropped connection resumes, a rotated token is read again" {
	local before
	k8_event ADDED vt-self "192.168.78.1" "10.78.1.0/24"
	k8_event ADDED vt-a "192.168.78.2" "10.78.2.0/24"
	k8_server
	k8_velod
	k8_wait_route "^10.78.2.0/24 via 192.168.78.2 dev vtk8s0" "" 10

	# A dropped connection: velod watches again from the last resourceVersion, no LIST.
	k8_event ADDED vt-b "192.168.78.3" "10.78.3.0/24"
	k8_wait_route "^10.78.3.0/24 via 192.168.78.3 dev vtk8s0"
	k8_bump drop
	for _ in $(seq 40); do
		grep -q "watch=1&resourceVersion=103&" "$K8_API/requests.log" && break
		sleep 0.1
	done
	grep -q "watch=1&resourceVersion=103&" "$K8_API/requests.log" || { k8_show; false; }
	[ "$(k8_metric velo_k8s_node_lists_total)" = 1 ]
	[ "$(k8_metric velo_k8s_watch_restarts_total)" -ge 1 ]

	# An ERROR event with code 410: velod relists. A node deleted while no watch carried it
	# (the log is edited, as etcd compaction would lose the event) goes with the relist.
	grep -v '"vt-a"' "$K8_API/events" >"$K8_API/events.new"
	cat "$K8_API/events.new" >"$K8_API/events"
	k8_bump expire
	k8_wait_route "^10.78.2.0/24" absent 4
	k8_wait_route "^10.78.3.0/24 via 192.168.78.3 dev vtk8s0"
	[ "$(k8_metric velo_k8s_node_relists_total)" = 1 ]
	grep -q "410 Gone): relisting" "$VT/velod.log"

	# HTTP 410 on a watch from a compacted resourceVersion: relist again.
	echo 1000 >"$K8_API/compacted"
	k8_bump drop
	for _ in $(seq 40); do
		[ "$(k8_metric velo_k8s_node_relists_total)" -ge 2 ] && break
		sleep 0.1
	done
	rm "$K8_API/compacted"
	[ "$(k8_metric velo_k8s_node_relists_total)" -ge 2 ] || { k8_show; false; }
	# Settled: watching again, events flow.
	k8_event ADDED vt-e "192.168.78.7" "10.78.7.0/24"
	k8_wait_route "^10.78.7.0/24 via 192.168.78.7 dev vtk8s0" "" 5

	# The token rotates: the server takes only the new one from now on, and ends the watch.
	before="$(grep -c "vt-token-two" "$K8_API/requests.log" || true)"
	[ "$before" = 0 ]
	echo vt-token-two >"$K8_API/token.new"
	mv "$K8_API/token.new" "$K8_API/token"
	echo vt-token-two >"$K8_API/accepted-token"
	k8_bump drop
	k8_event ADDED vt-c "192.168.78.4" "10.78.4.0/24"
	k8_wait_route "^10.78.4.0/24 via 192.168.78.4 dev vtk8s0" "" 5
	grep -q "Bearer vt-token-two /api/v1/nodes?watch=1" "$K8_API/requests.log"
	[ "$(k8_healthz)" = 200 ]

	# SIGTERM ends velod promptly although its watch thread is blocked in a transfer.
	kill -TERM "${VT_PIDS[-1]}"
	for _ in $(seq 30); do
		kill -0 "${VT_PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "${VT_PIDS[-1]}" 2>/dev/null; then
		echo "velod still running 3 s after SIGTERM"
		false
	fi
	wait "${VT_PIDS[-1]}" || { echo "velod exited $?"; false; }
	grep -q "velod stopping" "$VT/velod.log"
}

@test "Node watch in cluster: the service account's token and CA, NODE_NAME; kubeconfig with nodesFile is refused" {
	k8_event ADDED vt-self "192.168.78.1" "10.78.1.0/24"
	k8_event ADDED vt-a "192.168.78.2 fd00:78::2" "10.78.2.0/24 fd78:2::/64"
	k8_server
	k8_velod inCluster
	k8_wait_route "^10.78.2.0/24 via 192.168.78.2 dev vtk8s0" "" 10
	k8_wait_route "^fd78:2::/64 via fd00:78::2 dev vtk8s0"
	k8_wait_healthz 200 5
	grep -q "Bearer vt-token-one /api/v1/nodes?limit=" "$K8_API/requests.log"
	if k8_in ip route show proto 118 | grep -q "10.78.1.0"; then k8_show; false; fi

	jq '. + {nodesFile: "/dev/null", nodeName: "vt-self"}' "$VT/velod.json" >"$VT/both.json"
	run k8_in "$K8_VELOD" --config "$VT/both.json"
	[ "$status" -eq 1 ]
	[[ "$output" == *"nodesFile and inCluster exclude each other"* ]]
}
