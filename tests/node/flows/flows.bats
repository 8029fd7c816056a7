#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Flow events (docs/flows.md): every drop reason velo's programs have, each produced on purpose
# between pods velo wired, read by velod from the ring buffer and seen in `veloctl observe` with
# the right pods, path and verdict; velod's drop metrics; observe's filters and --follow; the
# loss counter when a tiny ring floods.

load ../lib/lib
load ../lib/cgroup_lib
load ../lib/services_lib
load flows_lib

setup() {
	svc_setup
	command -v bpftool >/dev/null || skip "bpftool not installed"
}

@test "flows: a spoofed source is dropped at tc and at XDP, shown with the pod that sent it" {
	local mode spoof out n=10
	flows_velod
	flows_pod b
	for mode in tc xdp; do
		flows_pod "a$mode" "{\"velo.dev/fastpath\": \"$mode\"}"
		spoof="192.0.2.$((n++))"
		vt_pod "$P_NS" ip addr add "$spoof/32" dev eth0
		run flows_ping "$P_NS" "$IP_b" "$spoof"
		[ "$status" -ne 0 ]
		out="$(flows_wait --reason spoofed-source --ip "$spoof")"
		echo "$out"
		[ "$(flows_field "$out" .path)" = "$mode" ]
		[ "$(flows_field "$out" .verdict)" = dropped ]
		[ "$(flows_field "$out" .src.pod)" = "velotest/pod-ctr-a$mode" ]
		[ "$(flows_field "$out" .dst.pod)" = velotest/pod-ctr-b ]
		[ "$(flows_field "$out" .proto)" = icmp ]
	done
	# The text form names both pods and the reason.
	run flows_observe --reason spoofed-source --pod velotest/pod-ctr-atc
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -ge 1 ]
	grep -q "velotest/pod-ctr-atc (192.0.2.10) -> velotest/pod-ctr-b ($IP_b) icmp DROPPED (spoofed-source) via tc" <<<"$output"
}

@test "flows: the egress deny list's drops (cgroup) name both pods; velo_drops_total counts them" {
	local out
	flows_velod
	flows_pod b
	flows_pod a "{\"velo.dev/egress-deny\": \"$IP_b/32\"}"
	run vtc_run "$NS_a" "$CG_a" "${VT_PING[@]}" -c 1 -W 1 "$IP_b"
	[ "$status" -ne 0 ]
	out="$(flows_wait --reason egress-deny-list)"
	echo "$out"
	[ "$(flows_field "$out" .path)" = cgroup ]
	[ "$(flows_field "$out" .src.pod)" = velotest/pod-ctr-a ]
	[ "$(flows_field "$out" .dst.pod)" = velotest/pod-ctr-b ]
	[ "$(flows_field "$out" .dst.ip)" = "$IP_b" ]
	n="$(svc_metric 'velo_drops_total{pod="velotest/pod-ctr-a",reason="egress-deny-list"}')"
	echo "velo_drops_total: $n"
	[ "${n:-0}" -ge 1 ]
	n="$(svc_metric 'velo_flows_total{src="velotest/pod-ctr-a",dst="velotest/pod-ctr-b",verdict="dropped"}')"
	[ "${n:-0}" -ge 1 ]
}

@test "flows: the deny list's tc half drops frames of a veth it has no key for (fail closed)" {
	local out ifindex
	flows_velod
	flows_pod b
	flows_pod a "{\"velo.dev/egress-deny\": \"192.0.2.1/32\"}"
	# velo_tc_deny without its velo_deny_if_v1 entry fails closed, as between attach and key.
	ifindex="$(jq -r .hostIfindex "$VT"/state/*/ctr-a:eth0.json)"
	[ -n "$ifindex" ]
	# shellcheck disable=SC2046
	bpftool map delete pinned "$VTC_BPFFS/velo_deny_if_v1" key hex $(flows_le32 "$ifindex")
	run flows_ping "$NS_a" "$IP_b"
	[ "$status" -ne 0 ]
	out="$(flows_wait --reason egress-deny-pending --ip "$IP_b")"
	echo "$out"
	[ "$(flows_field "$out" .path)" = tc ]
	[ "$(flows_field "$out" .src.pod)" = velotest/pod-ctr-a ]
	[ "$(flows_field "$out" .ifindex)" = "$ifindex" ]
}

@test "flows: a Service without endpoints: the refused connect names the pod (its cgroup) and the VIP" {
	local out
	svc_file "[$(svc_service noep 10.96.0.20 fd00:96::20 -- '{"name": "http", "protocol": "TCP", "port": 80}')]" '[]' \
		>"$VT/services.json"
	flows_velod
	flows_pod a '{"velo.dev/services": "true"}'
	[ "$(svc_client "$NS_a" "$CG_a" refused tcp 10.96.0.20 80)" = ECONNREFUSED ]
	out="$(flows_wait --reason service-no-endpoints)"
	echo "$out"
	[ "$(flows_field "$out" .path)" = socket ]
	[ "$(flows_field "$out" .src.pod)" = velotest/pod-ctr-a ]
	[ "$(flows_field "$out" .dst.ip)" = 10.96.0.20 ]
	[ "$(flows_field "$out" .dst.port)" = 80 ]
	[ "$(flows_field "$out" .proto)" = tcp ]
	[ "$(flows_field "$out" .service.name)" = velotest/noep:http/tcp ]
}

@test "flows: a connect velo translated names its Service, and the backend it reached" {
	local out web
	svc_file '[]' '[]' >"$VT/services.json"
	flows_velod
	flows_pod b
	flows_pod a '{"velo.dev/services": "true", "velo.dev/flows": "true"}'
	web="$(svc_service web 10.96.0.21 fd00:96::21 -- '{"name": "http", "protocol": "TCP", "port": 80}')"
	svc_write "$(svc_file "[$web]" "[$(svc_slice web-4 web IPv4 '[{"name": "http", "port": 8085}]' "$IP_b")]")"
	flows_serve "$NS_b" "$CG_b" 8085 50
	flows_connect "$NS_a" "$CG_a" 10.96.0.21 80 60
	out="$(flows_wait_end 8085)"
	echo "$out"
	[ "$(flows_count "$out" start)" -eq 1 ]
	flows_check_end "$out" velotest/pod-ctr-a velotest/pod-ctr-b 8085 60 50
	# Start and end both name what the client dialled; dst is the backend.
	[ "$(jq -rs '[.[] | .service.name] | unique | join(",")' <<<"$out")" = velotest/web:http/tcp ]
	[ "$(jq -rs '[.[] | .service.ip + ":" + (.service.port | tostring)] | unique | join(",")' <<<"$out")" = 10.96.0.21:80 ]
	[ "$(flows_field "$out" .dst.ip)" = "$IP_b" ]
	run flows_observe --service velotest/web
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	grep -q "velotest/pod-ctr-b:8085 ($IP_b) tcp FORWARDED start via unknown service velotest/web:http/tcp (10.96.0.21:80)" <<<"$output"
}

@test "flows: NetworkPolicy's drops: pending identity, egress and ingress deny (with the identity), spoofed source" {
	local out
	# Policy on (velod's switch), a NetworkPolicy in namespace velotest, and pods velod never
	# places: their Pods aren't in its file, and it doesn't look again within the test (an
	# hour), so the maps below are the test's to write.
	flows_pol_file '[]' "[{\"metadata\": {\"namespace\": \"velotest\", \"name\": \"none\"},
		\"spec\": {\"podSelector\": {\"matchLabels\": {\"none\": \"x\"}}}}]"
	flows_velod "$(jq -cn --arg f "$VT/policy.json" \
		'{policySource: "file", policyFile: $f, policySyncMs: 3600000}')"
	# Pods of a namespace with a policy whose identity velod hasn't placed: fail closed.
	flows_pod pb '{}'
	flows_pod pa '{}'
	run flows_ping "$NS_pa" "$IP_pb"
	[ "$status" -ne 0 ]
	out="$(flows_wait --reason policy-pending --pod velotest/pod-ctr-pa)"
	echo "$out"
	[ "$(flows_field "$out" .src.pod)" = velotest/pod-ctr-pa ]
	[ "$(flows_field "$out" .path)" = tc ]

	# velod's sync, by hand: identities 256 (pa) and 257 (pb); pa isolated for egress, no rule.
	flows_pol_pod "$IP_pa" 256
	flows_pol_pod "$IP_pb" 257
	flows_pol_isolate 256 2
	flows_pol_revision 1
	run flows_ping "$NS_pa" "$IP_pb"
	[ "$status" -ne 0 ]
	out="$(flows_wait --reason policy-egress-denied)"
	echo "$out"
	[ "$(flows_field "$out" .src.pod)" = velotest/pod-ctr-pa ]
	[ "$(flows_field "$out" .dst.pod)" = velotest/pod-ctr-pb ]
	[ "$(flows_field "$out" .identity)" = 256 ]

	# pb isolated for ingress instead: the receiver's policy says no.
	flows_pol_isolate 256 0
	flows_pol_isolate 257 1
	flows_pol_revision 2
	run flows_ping "$NS_pa" "$IP_pb"
	[ "$status" -ne 0 ]
	out="$(flows_wait --reason policy-ingress-denied)"
	echo "$out"
	[ "$(flows_field "$out" .src.pod)" = velotest/pod-ctr-pa ]
	[ "$(flows_field "$out" .dst.pod)" = velotest/pod-ctr-pb ]
	[ "$(flows_field "$out" .identity)" = 257 ]
	n="$(svc_metric 'velo_drops_total{pod="velotest/pod-ctr-pb",reason="policy-ingress-denied"}')"
	[ "${n:-0}" -ge 1 ]
	# What an operator sees (docs/flows.md shows this session).
	run flows_observe --verdict dropped --pod velotest/pod-ctr-pb
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q "velotest/pod-ctr-pa ($IP_pa) -> velotest/pod-ctr-pb ($IP_pb) icmp DROPPED (policy-ingress-denied) via tc identity 257" <<<"$output"
	grep -q "DROPPED (policy-egress-denied) via tc identity 256" <<<"$output"
	grep -q "DROPPED (policy-pending) via tc" <<<"$output"

	# Policy's own anti-spoofing on the veth.
	vt_pod "$NS_pa" ip addr add 192.0.2.99/32 dev eth0
	run flows_ping "$NS_pa" "$IP_pb" 192.0.2.99
	[ "$status" -ne 0 ]
	out="$(flows_wait --reason policy-spoofed-source)"
	echo "$out"
	[ "$(flows_field "$out" .src.ip)" = 192.0.2.99 ]
	[ "$(flows_field "$out" .src.pod)" = velotest/pod-ctr-pa ]
}

# flows_pol_file PODS_JSON POLICIES_JSON [CNPS_JSON]: velod's policyFile (namespace velotest)
# with these.
flows_pol_file() {
	jq -cn --argjson pods "$1" --argjson pols "$2" --argjson cnps "${3:-[]}" '{
		namespaces: [{metadata: {name: "velotest", labels: {ns: "velotest"}}}],
		pods: $pods, networkPolicies: $pols, clusterNetworkPolicies: $cnps}' >"$VT/policy.json.tmp"
	mv "$VT/policy.json.tmp" "$VT/policy.json"
}

@test "flows: a policy drop names the NetworkPolicies behind it, from velod's own policy state" {
	local out pods pols _
	flows_pol_file '[]' '[]'
	flows_velod "$(jq -cn --arg f "$VT/policy.json" \
		'{policySource: "file", policyFile: $f, policySyncMs: 50}')"
	flows_pod pb '{}' '.policy = true'
	flows_pod pa '{}' '.policy = true'
	# pb is selected by two policies: one isolates its ingress (and allows nothing), the other
	# only its egress. pa is selected by none.
	pods="$(jq -cn --arg a "$IP_pa" --arg b "$IP_pb" '[
		{metadata: {namespace: "velotest", name: "pod-ctr-pa", labels: {app: "a"}},
		 spec: {nodeName: "node-a"}, status: {phase: "Running", podIP: $a, podIPs: [{ip: $a}]}},
		{metadata: {namespace: "velotest", name: "pod-ctr-pb", labels: {app: "b"}},
		 spec: {nodeName: "node-a"}, status: {phase: "Running", podIP: $b, podIPs: [{ip: $b}]}}]')"
	pols='[{"metadata": {"namespace": "velotest", "name": "deny-to-b"},
		"spec": {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"]}},
		{"metadata": {"namespace": "velotest", "name": "b-egress"},
		"spec": {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Egress"],
		"egress": [{}]}}]'
	flows_pol_file "$pods" "$pols"
	# Until velod's next sync pb has no programs (its namespace had no policy at ADD), or its
	# identity is pending; then pb's ingress policy says no.
	for _ in $(seq 40); do
		flows_ping "$NS_pa" "$IP_pb" || true
		out="$(flows_observe -j --reason policy-ingress-denied)"
		[ -n "$out" ] && break
		sleep 0.5
	done
	echo "$out"
	[ -n "$out" ]
	run flows_ping "$NS_pa" "$IP_pb"
	[ "$status" -ne 0 ]
	[ "$(flows_field "$out" .dst.pod)" = velotest/pod-ctr-pb ]
	[ "$(flows_field "$out" '.policies | join(",")')" = velotest/deny-to-b ]
	run flows_observe --reason policy-ingress-denied
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q "velotest/pod-ctr-pa ($IP_pa) -> velotest/pod-ctr-pb ($IP_pb) icmp DROPPED (policy-ingress-denied) via tc identity [0-9]* policies velotest/deny-to-b\$" <<<"$output"
}

@test "flows: audit mode: audited policies' would-be drops pass as audit flows naming the policy, counted per pod and policy; enforced, the same pairs drop" {
	local out pods pols cnps n _
	flows_pol_file '[]' '[]'
	flows_velod "$(jq -cn --arg f "$VT/policy.json" \
		'{policySource: "file", policyFile: $f, policySyncMs: 50}')"
	flows_pod pc '{}' '.policy = true'
	flows_pod pb '{}' '.policy = true'
	flows_pod pa '{}' '.policy = true'
	pods="$(jq -cn --arg a "$IP_pa" --arg b "$IP_pb" --arg c "$IP_pc" '[
		{metadata: {namespace: "velotest", name: "pod-ctr-pa", labels: {app: "a"}},
		 spec: {nodeName: "node-a"}, status: {phase: "Running", podIP: $a, podIPs: [{ip: $a}]}},
		{metadata: {namespace: "velotest", name: "pod-ctr-pb", labels: {app: "b"}},
		 spec: {nodeName: "node-a"}, status: {phase: "Running", podIP: $b, podIPs: [{ip: $b}]}},
		{metadata: {namespace: "velotest", name: "pod-ctr-pc", labels: {app: "c"}},
		 spec: {nodeName: "node-a"}, status: {phase: "Running", podIP: $c, podIPs: [{ip: $c}]}}]')"
	# Audited: a deny-all of pb's ingress (NetworkPolicy) and an Admin Deny of pa into pc.
	pols='[{"metadata": {"namespace": "velotest", "name": "deny-to-b",
		"annotations": {"velo.dev/policy-audit": "true"}},
		"spec": {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"]}}]'
	cnps='[{"metadata": {"name": "no-a-to-c", "annotations": {"velo.dev/policy-audit": "true"}},
		"spec": {"tier": "Admin", "priority": 5, "subject": {"pods": {"namespaceSelector": {},
		"podSelector": {"matchLabels": {"app": "c"}}}}, "ingress": [{"action": "Deny",
		"from": [{"pods": {"namespaceSelector": {}, "podSelector": {"matchLabels": {"app": "a"}}}}]}]}}]'
	flows_pol_file "$pods" "$pols" "$cnps"
	# Once velod has placed the pods, both pairs pass and are reported as audit.
	for _ in $(seq 40); do
		flows_ping "$NS_pa" "$IP_pb" || true
		flows_ping "$NS_pa" "$IP_pc" || true
		out="$(flows_observe -j --verdict audit)"
		[ "$(jq -s length <<<"$out")" -ge 2 ] && break
		sleep 0.5
	done
	echo "$out"
	run flows_ping "$NS_pa" "$IP_pb"
	[ "$status" -eq 0 ]
	run flows_ping "$NS_pa" "$IP_pc"
	[ "$status" -eq 0 ]
	[ "$(jq -rs '[.[] | select(.dst.pod == "velotest/pod-ctr-pb")][0].policies | join(",")' <<<"$out")" = velotest/deny-to-b ]
	[ "$(jq -rs '[.[] | select(.dst.pod == "velotest/pod-ctr-pc")][0].policies | join(",")' <<<"$out")" = Admin:no-a-to-c ]
	[ "$(jq -rs '[.[] | select(.dst.pod == "velotest/pod-ctr-pc")][0].reason' <<<"$out")" = policy-ingress-denied ]
	run flows_observe --verdict audit --pod velotest/pod-ctr-pb
	echo "$output"
	grep -q "velotest/pod-ctr-pa ($IP_pa) -> velotest/pod-ctr-pb ($IP_pb) icmp AUDIT (policy-ingress-denied) via tc identity [0-9]* policies velotest/deny-to-b\$" <<<"$output"
	# Nothing dropped; would-drops counted per pod and policy.
	run flows_observe -j --verdict dropped
	[ -z "$output" ]
	n="$(svc_metric 'velo_policy_audit_total{pod="velotest/pod-ctr-pc",policy="Admin:no-a-to-c",reason="policy-ingress-denied"}')"
	[ "${n:-0}" -ge 1 ]
	n="$(svc_metric 'velo_policy_audit_total{pod="velotest/pod-ctr-pb",policy="velotest/deny-to-b",reason="policy-ingress-denied"}')"
	[ "${n:-0}" -ge 1 ]
	# Enforced (the annotations gone), with no pod restarted: the same pairs drop.
	flows_pol_file "$pods" "$(jq -c 'map(del(.metadata.annotations))' <<<"$pols")" \
		"$(jq -c 'map(del(.metadata.annotations))' <<<"$cnps")"
	for _ in $(seq 40); do
		flows_ping "$NS_pa" "$IP_pb" || flows_ping "$NS_pa" "$IP_pc" || break
		sleep 0.25
	done
	run flows_ping "$NS_pa" "$IP_pb"
	[ "$status" -ne 0 ]
	run flows_ping "$NS_pa" "$IP_pc"
	[ "$status" -ne 0 ]
	out="$(flows_wait --verdict dropped --pod velotest/pod-ctr-pc)"
	echo "$out"
	[ "$(flows_field "$out" .reason)" = policy-ingress-denied ]
}

@test "flows: a pod that opts in (velo.dev/flows) reports each TCP connection's start and end, bytes each way" {
	local out
	flows_velod
	flows_pod b
	flows_pod a '{"velo.dev/flows": "true"}'
	flows_serve "$NS_b" "$CG_b" 8080 1000
	flows_connect "$NS_a" "$CG_a" "$IP_b" 8080 5000
	out="$(flows_wait_end 8080)"
	echo "$out"
	# Only the opted-in pod's socket reports: one start, one end.
	[ "$(flows_count "$out" start)" -eq 1 ]
	[ "$(flows_count "$out" end)" -eq 1 ]
	flows_check_end "$out" velotest/pod-ctr-a velotest/pod-ctr-b 8080 5000 1000
	out="$(jq -c 'select(.kind == "end")' <<<"$out")"
	[ "$(jq -r .verdict <<<"$out")" = forwarded ]
	[ "$(jq -r .path <<<"$out")" = routed ]
	[ "$(jq -r .segs_out <<<"$out")" -ge 1 ]
	n="$(svc_metric 'velo_flows_total{src="velotest/pod-ctr-a",dst="velotest/pod-ctr-b",verdict="forwarded"}')"
	[ "${n:-0}" -eq 1 ]
	run flows_observe --pod velotest/pod-ctr-a --port 8080
	echo "$output"
	grep -Eq "velotest/pod-ctr-a:[0-9]+ \($IP_a\) -> velotest/pod-ctr-b:8080 \($IP_b\) tcp FORWARDED end via routed bytes 500[0-2]/100[0-2]" <<<"$output"
}

@test "flows: a pod's connections to itself over loopback are no flows (IPv4 and IPv6), its connections out still are" {
	local out
	flows_velod
	flows_pod b
	flows_pod a '{"velo.dev/flows": "true"}'
	flows_serve "$NS_a" "$CG_a" 8090 100
	flows_connect "$NS_a" "$CG_a" 127.0.0.1 8090 100
	vtc_run "$NS_a" "$CG_a" timeout 10 python3 -c '
import socket
srv = socket.socket(socket.AF_INET6); srv.bind(("::1", 8091)); srv.listen(1)
c = socket.create_connection(("::1", 8091)); a, _ = srv.accept(); c.sendall(b"x"); a.recv(1)
c.close(); a.close()'
	flows_serve "$NS_b" "$CG_b" 8080 100
	flows_connect "$NS_a" "$CG_a" "$IP_b" 8080 100
	out="$(flows_wait_end 8080)"
	echo "$out"
	[ "$(flows_count "$out" end)" -eq 1 ]
	run flows_observe -j
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -s '[.[] | select(([.src.port, .dst.port] | map(. == 8090 or . == 8091) | any))] | length' <<<"$output")" -eq 0 ]
	[ "$(jq -s '[.[] | select(.dst.port == 8080)] | length' <<<"$output")" -ge 1 ]
}

@test "flows: the accepting side reads client to server too; the conflist default opts in, a pod's false opts out" {
	local out
	flows_velod
	flows_pod b '{}' '.defaults = {"velo.dev/flows": "true"}'
	flows_pod a '{"velo.dev/flows": "false"}' '.defaults = {"velo.dev/flows": "true"}'
	flows_serve "$NS_b" "$CG_b" 8081 300
	flows_connect "$NS_a" "$CG_a" "$IP_b" 8081 700
	out="$(flows_wait_end 8081)"
	echo "$out"
	[ "$(flows_count "$out" start)" -eq 1 ]
	flows_check_end "$out" velotest/pod-ctr-a velotest/pod-ctr-b 8081 700 300
}

@test "flows: a connection between two opted-in pods of the node is reported once, by its client; DEL takes the pod out of velo_fl_pods_v1" {
	local out map="$VTC_BPFFS/velo_fl_pods_v1"
	flows_velod
	flows_pod b '{"velo.dev/flows": "true"}'
	flows_pod a '{"velo.dev/flows": "true"}'
	flows_pod c
	# Both opted-in pods' addresses (dual-stack: two each), not c's.
	run bpftool -j map dump pinned "$map"
	[ "$status" -eq 0 ]
	[ "$(jq length <<<"$output")" -eq 4 ]
	# shellcheck disable=SC2046 # one byte a word
	bpftool map lookup pinned "$map" key hex $(flows_hex_mapped "$IP_a") >/dev/null
	vt_cni CHECK ctr-a "$NS_a" eth0 "$(vt_with_prev "$CONF_a" "$RESULT_a")"
	vt_assert_ok
	flows_serve "$NS_b" "$CG_b" 8083 200
	flows_connect "$NS_a" "$CG_a" "$IP_b" 8083 400
	out="$(flows_wait_end 8083)"
	echo "$out"
	# The accepting socket left it to the client: one start, one end.
	[ "$(flows_count "$out" start)" -eq 1 ]
	[ "$(flows_count "$out" end)" -eq 1 ]
	flows_check_end "$out" velotest/pod-ctr-a velotest/pod-ctr-b 8083 400 200
	# A client that doesn't report (c) leaves it to b's accepting socket, read client -> server.
	flows_serve "$NS_b" "$CG_b" 8084 100
	flows_connect "$NS_c" "$CG_c" "$IP_b" 8084 300
	out="$(flows_wait_end 8084)"
	echo "$out"
	[ "$(flows_count "$out" start)" -eq 1 ]
	flows_check_end "$out" velotest/pod-ctr-c velotest/pod-ctr-b 8084 300 100
	# CHECK sees a missing entry; DEL removes the pod's own.
	# shellcheck disable=SC2046
	bpftool map delete pinned "$map" key hex $(flows_hex_mapped "$IP_a")
	vt_cni CHECK ctr-a "$NS_a" eth0 "$(vt_with_prev "$CONF_a" "$RESULT_a")"
	vt_assert_error 106 "velo_fl_pods_v1"
	vt_cni DEL ctr-b "$NS_b" eth0 "$CONF_b"
	vt_assert_ok
	run bpftool -j map dump pinned "$map"
	[ "$status" -eq 0 ]
	[ "$(jq length <<<"$output")" -eq 1 ] # a's IPv6 address: b's are gone
}

@test "flows: UDP (velo.dev/flows-udp): a 5-tuple's first datagram is its start, once, from each opted-in end" {
	local out _ udp='{"velo.dev/flows": "true", "velo.dev/flows-udp": "true"}'
	flows_velod
	flows_pod b "$udp"
	flows_pod a "$udp"
	flows_pod c '{"velo.dev/flows": "true"}'
	vtc_run "$NS_b" "$CG_b" timeout 30 python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 5301))
print("listening", flush=True)
for _ in range(5): s.recvfrom(100)
print("got 5", flush=True)' >"$VT/work/udp.log" 2>&1 &
	VT_PIDS+=($!)
	flows_wait_line "$VT/work/udp.log" listening
	# Three datagrams of one 5-tuple, then one of another.
	vtc_run "$NS_a" "$CG_a" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 40001))
for _ in range(3): s.sendto(b"x", (sys.argv[1], 5301))
t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); t.bind(("0.0.0.0", 40002))
t.sendto(b"y", (sys.argv[1], 5301))' "$IP_b"
	# c has TCP events only: its datagram is reported by b's end alone.
	vtc_run "$NS_c" "$CG_c" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 40003))
s.sendto(b"z", (sys.argv[1], 5301))' "$IP_b"
	flows_wait_line "$VT/work/udp.log" "got 5"
	# The second tuple's start, from both ends, comes after everything the first one could cause.
	out="$(flows_wait_starts 2 --protocol udp --port 40002)"
	echo "$out"
	[ "$(flows_count "$out" start)" -eq 2 ]
	out="$(flows_wait_starts 1 --protocol udp --port 40003)"
	echo "$out"
	[ "$(flows_count "$out" start)" -eq 1 ]
	[ "$(flows_field "$out" .src.pod)" = velotest/pod-ctr-c ]
	out="$(flows_observe -j --protocol udp --port 5301 --pod velotest/pod-ctr-a)"
	echo "$out"
	[ "$(flows_count "$out" start)" -eq 4 ]
	[ "$(jq -s '[.[] | select(.src.port == 40001)] | length' <<<"$out")" -eq 2 ]
	[ "$(jq -s '[.[] | select(.src.pod == "velotest/pod-ctr-a" and .dst.pod == "velotest/pod-ctr-b"
		and .dst.port == 5301 and .proto == "udp" and .verdict == "forwarded")] | length' \
		<<<"$out")" -eq 4 ]
}

@test "flows: a sockmap redirect whose peer left the sockhash goes routed, shown as sockmap-redirect-lost" {
	local out key _ bugs
	bugs='.sockmapAcceptKernelBugs = ["halfclose-eagain", "splice-ingress", "waitall-short", "rcvlowat-ignored"]'
	flows_velod
	flows_pod b '{"velo.dev/sockmap": "true"}' "$bugs"
	flows_pod a '{"velo.dev/sockmap": "true"}' "$bugs"
	flows_serve "$NS_b" "$CG_b" 8082 10
	# The client's first send is redirected into the peer socket; then, after the go, more than
	# one verdict's worth (apply_bytes mode: 1 MiB), so velo_sk_msg runs again.
	vtc_run "$NS_a" "$CG_a" timeout 20 python3 -c '
import os, socket, sys, time
s = socket.create_connection((sys.argv[1], 8082), timeout=15); s.sendall(b"q" * 1000)
print("sent", flush=True)
while not os.path.exists(sys.argv[2]): time.sleep(0.05)
s.sendall(b"q" * (3 << 20)); s.shutdown(socket.SHUT_WR)
print("done", flush=True)
while s.recv(65536): pass' "$IP_b" "$VT/work/go" >"$VT/work/client.log" 2>&1 &
	VT_PIDS+=($!)
	flows_wait_line "$VT/work/client.log" sent
	# The server's socket leaves the sockhash, as when it closes: its key starts with its address.
	key="$(bpftool map dump pinned "$VTC_BPFFS/velo_sock_v1" -j |
		jq -r --arg p "$(flows_hex_mapped "$IP_b" | sed 's/\([0-9a-f][0-9a-f]\)/0x\1/g')" \
		'.[] | select((.key[0:16] | join(" ")) == $p) | .key | map(ltrimstr("0x")) | join(" ")')"
	echo "server's key: $key"
	[ -n "$key" ]
	# shellcheck disable=SC2086 # one byte a word
	bpftool map delete pinned "$VTC_BPFFS/velo_sock_v1" key hex $key
	touch "$VT/work/go"
	flows_wait_line "$VT/work/client.log" done
	out="$(flows_wait --reason sockmap-redirect-lost)"
	echo "$out"
	[ "$(flows_field "$out" .verdict)" = forwarded ]
	[ "$(flows_field "$out" .path)" = sockmap ]
	[ "$(flows_field "$out" .src.pod)" = velotest/pod-ctr-a ]
	[ "$(flows_field "$out" .dst.pod)" = velotest/pod-ctr-b ]
	[ "$(flows_field "$out" .dst.port)" = 8082 ]
}

@test "flows: observe's filters (verdict, protocol, port, namespace, since) and --follow streams new flows, from velod's local socket" {
	local out pid
	flows_velod
	flows_pod b
	flows_pod a "{\"velo.dev/egress-deny\": \"$IP_b/32\"}"
	vtc_run "$NS_a" "$CG_a" timeout 5 python3 -c '
import socket, sys
s = socket.socket(); s.settimeout(0.5)
try: s.connect((sys.argv[1], 8080))
except OSError: pass' "$IP_b"
	out="$(flows_wait --reason egress-deny-list --protocol tcp --port 8080)"
	[ "$(flows_field "$out" .dst.port)" = 8080 ]
	# Filters that match nothing print nothing.
	[ -z "$(flows_observe -j --verdict forwarded)" ]
	[ -z "$(flows_observe -j --protocol udp)" ]
	[ -z "$(flows_observe -j --namespace kube-system)" ]
	[ -n "$(flows_observe -j --namespace velotest --since 5m)" ]
	# Bad values are usage errors.
	run flows_observe --verdict maybe
	[ "$status" -eq 2 ]
	run flows_observe --reason no-such-reason
	[ "$status" -eq 2 ]
	# observe reads velod's local socket: the listen address refuses /flows, saying where it is.
	run vt_node "$FL_CTL" --socket "" --agent "127.0.0.1:$SVC_PORT" observe
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q "velod answered /flows with 403: .*served only on velod's local socket $VT/run/velod.sock" <<<"$output"
	# --follow: a flow that happens while it runs arrives on the open stream.
	flows_observe -j --follow --protocol udp >"$VT/work/follow.out" 2>&1 &
	pid=$!
	VT_PIDS+=("$pid")
	sleep 0.5
	[ ! -s "$VT/work/follow.out" ]
	vtc_run "$NS_a" "$CG_a" python3 -c '
import socket, sys
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", (sys.argv[1], 5353))' "$IP_b" || true
	for _ in $(seq 200); do
		[ -s "$VT/work/follow.out" ] && break
		sleep 0.1
	done
	cat "$VT/work/follow.out"
	[ "$(jq -r .dst.port "$VT/work/follow.out")" = 5353 ]
	[ "$(jq -r .reason "$VT/work/follow.out")" = egress-deny-list ]
	kill "$pid"
}

@test "flows: a flood into a tiny ring is never blocked: over half full drops are sampled, what doesn't fit is counted lost" {
	local lost read_total sampled weights
	# 4 KiB: about 37 events; velod is stopped so nothing drains it.
	flows_velod '{"flowRingBytes": 4096}'
	flows_pod b
	flows_pod a "{\"velo.dev/egress-deny\": \"$IP_b/32\"}"
	kill -STOP "$SVC_VELOD_PID"
	vtc_run "$NS_a" "$CG_a" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n = 0
for i in range(2000):
    try: s.sendto(b"x", (sys.argv[1], 9))
    except OSError: n += 1
print(n, "sends refused")' "$IP_b"
	kill -CONT "$SVC_VELOD_PID"
	# velod reads what the ring holds at its next turn (100 ms); a loaded machine may take longer.
	for _ in $(seq 200); do
		lost="$(svc_metric velo_flow_events_lost_total)"
		read_total="$(svc_metric velo_flow_events_total)"
		sampled="$(svc_metric velo_flow_events_sampled_out_total)"
		[ $((${lost:-0} + ${read_total:-0} + ${sampled:-0})) -ge 2000 ] && break
		sleep 0.1
	done
	echo "lost $lost, read $read_total, sampled out $sampled, ring $(svc_metric velo_flow_ring_bytes)"
	[ "$(svc_metric velo_flow_ring_bytes)" = 4096 ]
	[ "$read_total" -ge 1 ]
	[ "$read_total" -le 100 ]
	# Every drop is read, left out by sampling or lost: exactly.
	[ $((lost + read_total + sampled)) -eq 2000 ]
	# Past half full, 15 in 16 are left out; the kept ones say so, and count for 16.
	[ "$sampled" -ge 1000 ]
	weights="$(flows_observe -j --reason egress-deny-list | jq -s '[.[].weight] | group_by(.) | map("\(.[0])x\(length)") | join(" ")')"
	echo "weights: $weights"
	grep -Eq '^"1x[0-9]+ 16x[0-9]+"$' <<<"$weights"
	echo "velo_drops_total of a: $(svc_metric "velo_drops_total{pod=\"velotest/pod-ctr-a\",reason=\"egress-deny-list\"}")"
	[ "$(svc_metric "velo_drops_total{pod=\"velotest/pod-ctr-a\",reason=\"egress-deny-list\"}")" -gt "$read_total" ]
	run flows_observe --reason egress-deny-list
	grep -q "sampled 1:16" <<<"$output"
}
