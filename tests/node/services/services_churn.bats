#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Service translation under endpoint churn: established connections through a Service stay
# while an EndpointSlice still lists their backend (not ready, terminating) and when the
# Service is deleted, as kube-proxy leaves established flows alone; only a backend gone from
# every EndpointSlice of its Service has its connections closed (services.bats). A client holds
# a connection, velod syncs the change, then the client looks at its connection.

load ../lib/lib
load ../lib/cgroup_lib
load ../lib/services_lib

VIP4=10.96.0.10
SLICE_PORTS='[{"name": "http", "port": 8080}]'

# web_slice ENDPOINTS_JSON: the web Service's IPv4 EndpointSlice with these endpoints.
web_slice() {
	jq -cn --argjson p "$SLICE_PORTS" --argjson e "$1" '{metadata: {name: "web-4",
		namespace: "velotest", labels: {"kubernetes.io/service-name": "web"}},
		addressType: "IPv4", ports: $p, endpoints: $e}'
}

# endpoint IP CONDITIONS_JSON
endpoint() {
	jq -cn --arg ip "$1" --argjson c "$2" --arg n "$SVC_NODE" \
		'{addresses: [$ip], conditions: $c, nodeName: $n}'
}

# hold_connection OUT: a client pod holds a connection through web's VIP until $VT/work/go
# exists, then writes what became of it into OUT (after its "peer" and "got" lines).
hold_connection() {
	local _
	svc_pod client "$SVC_ON" || return 1
	svc_client "$P_NS" "$P_CG" tcphold "$VIP4" 80 "$VT/work/go" >"$1" 2>&1 &
	for _ in $(seq 100); do
		grep -q '^got' "$1" && break
		sleep 0.05
	done
	cat "$1"
	grep -qx "peer $VIP4 80" "$1" || return 1
	grep -q '^got' "$1"
}

# held_connection_after FILE_JSON: a client holds a connection through web's VIP to the
# backend, velod syncs FILE_JSON, then the client says what became of the connection
# (in $output: "open", "closed ERRNO", "eof").
held_connection_after() {
	local out="$VT/work/held.out" _
	svc_pod be '{}' || return 1
	BE_NS="$P_NS" BE_CG="$P_CG" BE4="$P_IP4"
	svc_server "$BE_NS" "$BE_CG" || return 1
	svc_velod
	svc_write "$(svc_file "[$(svc_service web "$VIP4" -- "$SVC_HTTP")]" \
		"[$(web_slice "[$(endpoint "$BE4" '{"ready": true}')]")]")" || return 1
	hold_connection "$out" || return 1
	# svc_write returns once velod logged the sync, which comes after closing connections.
	svc_write "$("$1")" || return 1
	touch "$VT/work/go"
	for _ in $(seq 100); do
		[ "$(wc -l <"$out")" -ge 3 ] && break
		sleep 0.05
	done
	cat "$out"
	output="$(sed -n 3p "$out")"
}

# stays_open CHANGE: the held connection is still open after CHANGE, and velod closed nothing.
stays_open() {
	held_connection_after "$1" || return 1
	[ "$output" = open ] || return 1
	run grep -c "closed .* connections" "$VT/velod.log"
	[ "$output" = 0 ]
}

terminating() {
	svc_file "[$(svc_service web "$VIP4" -- "$SVC_HTTP")]" "[$(web_slice "[$(endpoint "$BE4" \
		'{"ready": false, "serving": true, "terminating": true}'),
		$(endpoint 10.244.250.1 '{"ready": true}')]")]"
}

@test "services_churn: a connection to a backend that turns serving and terminating stays open" {
	stays_open terminating
}

unready() {
	svc_file "[$(svc_service web "$VIP4" -- "$SVC_HTTP")]" \
		"[$(web_slice "[$(endpoint "$BE4" '{"ready": false}')]")]"
}

@test "services_churn: a connection to a backend that turns unready stays open" {
	stays_open unready
}

deleted() {
	svc_file '[]' '[]'
}

@test "services_churn: connections through a deleted Service stay open" {
	stays_open deleted
}

gone() {
	svc_file "[$(svc_service web "$VIP4" -- "$SVC_HTTP")]" \
		"[$(web_slice "[$(endpoint 10.244.250.1 '{"ready": true}')]")]"
}

@test "services_churn: a connection to a backend gone from every EndpointSlice is closed" {
	held_connection_after gone
	[ "$output" = "closed ECONNABORTED" ]
	grep -q "services: closed 1 connections to removed backends" "$VT/velod.log"
}

# syncs_tried: velod's sync attempts so far (a sync logs its counts; a set it can't write, why).
syncs_tried() {
	grep -Ec 'services: (write .*|[0-9]+ service ports.*)$' "$VT/velod.log" 2>/dev/null
}

@test "services_churn: with the backend map full, a changed Service goes to its new backend, never the old" {
	local out="$VT/work/held.out" before filled _
	svc_pod be '{}'
	BE_NS="$P_NS" BE_CG="$P_CG" BE4="$P_IP4"
	svc_server "$BE_NS" "$BE_CG"
	vtc_run "$BE_NS" "$BE_CG" timeout 120 python3 "$SVC_PEER" server 9090 5354 \
		>"$VT/work/server-9090.log" 2>&1 &
	VT_PIDS+=($!)
	svc_velod
	svc_write "$(svc_file "[$(svc_service web "$VIP4" -- "$SVC_HTTP")]" \
		"[$(web_slice "[$(endpoint "$BE4" '{"ready": true}')]")]")"
	# Something else took every slot that is left (slots of no service, as a crash leaves).
	filled="$(vt_node python3 "$SVC_PEER" fillmap "$VTC_BPFFS/velo_svc_be_v1" 2147418112)"
	[ "$filled" -gt 0 ]
	# web moves to port 9090 of the pod (kube-proxy's rule says so too).
	svc_kube_proxy ip "$VIP4" tcp 80 "$BE4" 9090
	before="$(syncs_tried)"
	svc_file "[$(svc_service web "$VIP4" -- "$SVC_HTTP")]" "[$(jq -c \
		'.ports[0].port = 9090' <<<"$(web_slice "[$(endpoint "$BE4" '{"ready": true}')]")")]" \
		>"$VT/services.json.tmp"
	mv "$VT/services.json.tmp" "$VT/services.json"
	for _ in $(seq 200); do
		[ "$(syncs_tried)" -gt "$before" ] && break
		sleep 0.05
	done
	[ "$(syncs_tried)" -gt "$before" ]
	tail -n 3 "$VT/velod.log"

	# A new connection through the VIP reaches port 9090, through velo or kube-proxy.
	hold_connection "$out"
	nsenter --net="/run/netns/$BE_NS" ss -Htn state established '( sport = :9090 )' |
		grep -q .
	touch "$VT/work/go"
}
