#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Service translation (velo.dev/services), continued from services.bats: ClientIP affinity,
# named target ports resolved per EndpointSlice, headless Services left alone, a backend on the
# other simulated node (host-gw route), and veloctl sockets naming the VIP a connection came
# through. Which backend served a connection is read from each backend pod's own kernel
# (TcpPassiveOpens in its netns), not from velo's counters; every transfer is checked by digest.

load ../lib/lib
load ../lib/cgroup_lib
load ../lib/services_lib
load ../lib/multinode_lib

VIP4=10.96.0.40

setup() {
	svc_setup
	MN_USED=
}
teardown() {
	local i
	if [ -n "$MN_USED" ]; then
		for i in 1 2; do ip netns del "velotest-mn-n$i-$VT_TAG" 2>/dev/null || true; done
		ip netns del "velotest-mn-out-$VT_TAG" 2>/dev/null || true
		ip netns del "velotest-mn-ul-$VT_TAG" 2>/dev/null || true
	fi
	svc_teardown
	[ -z "$MN_USED" ] || rm -rf "${MN_BPFFS:?}"-n1 "${MN_BPFFS:?}"-n2
}

# opens NS: the TCP connections NS's kernel accepted so far.
opens() { vtc_nstat "$1" TcpPassiveOpens; }

# connects N POD CGROUP ADDR PORT: N connections, each sending 4 KiB and getting back its digest.
connects() {
	local i out sent got
	for i in $(seq "$1"); do
		out="$(svc_client "$2" "$3" tcp "$4" "$5" 4096)" || { echo "connect $i: $out"; return 1; }
		sent="$(awk '$1 == "sent" { print $2 }' <<<"$out")"
		got="$(awk '$1 == "got" { print $2 }' <<<"$out")"
		if [ -z "$sent" ] || [ "$sent" != "$got" ]; then
			echo "connect $i: digest: $out"
			return 1
		fi
	done
}

# two_backends [TCP_PORT_OF_B2]: backend pods B1 (8080) and B2 (8080 or the port given), serving.
two_backends() {
	svc_pod b1 '{}'
	B1_NS="$P_NS" B1="$P_IP4"
	svc_server "$B1_NS" "$P_CG"
	svc_pod b2 '{}'
	B2_NS="$P_NS" B2="$P_IP4"
	svc_server "$B2_NS" "$P_CG" "${1:-8080}"
}

# affinity_file BACKEND...: the Service with ClientIP affinity (10 s: a loaded machine spaced two
# connects of one client over 2 s and the test saw a fresh pick) over the backends.
affinity_file() {
	svc_file "[$(svc_service aff "$VIP4" -- "$SVC_HTTP" |
		jq -c '.spec.sessionAffinity = "ClientIP" |
		.spec.sessionAffinityConfig = {clientIP: {timeoutSeconds: 10}}')]" \
		"[$(svc_slice aff-4 aff IPv4 '[{"name": "http", "port": 8080}]' "$@")]"
}

# sticky N POD CGROUP: N connects through the VIP; all must land on one backend. Sets STUCK
# (B1 or B2).
sticky() {
	local b1 b2 d1 d2
	b1="$(opens "$B1_NS")" b2="$(opens "$B2_NS")"
	connects "$1" "$2" "$3" "$VIP4" 80 || return 1
	d1=$(($(opens "$B1_NS") - b1)) d2=$(($(opens "$B2_NS") - b2))
	echo "B1 got $d1, B2 got $d2 of $1"
	if [ "$d1" -eq "$1" ] && [ "$d2" -eq 0 ]; then
		STUCK=B1
	elif [ "$d2" -eq "$1" ] && [ "$d1" -eq 0 ]; then
		STUCK=B2
	else
		return 1
	fi
}

@test "services: sessionAffinity ClientIP keeps each client pod on one backend, also when the set changes" {
	local c1_ns c1_cg c2_ns c2_cg first other
	two_backends
	svc_kube_proxy ip "$VIP4" tcp 80 "$B1" 8080
	svc_velod
	svc_write "$(affinity_file "$B1" "$B2")"
	svc_pod c1 "$SVC_ON"
	c1_ns="$P_NS" c1_cg="$P_CG"
	svc_pod c2 "$SVC_ON"
	c2_ns="$P_NS" c2_cg="$P_CG"
	# Without affinity, 12 random picks over two backends all alike: 1 in 2048.
	sticky 12 "$c1_ns" "$c1_cg"
	first="$STUCK"
	# The second pod is a client of its own: it sticks too (to either).
	sticky 12 "$c2_ns" "$c2_cg"

	# The first pod's backend leaves: it moves to the other; when it comes back, the pod stays
	# where it is now (the affinity entry, refreshed by each connect, names the other one).
	if [ "$first" = B1 ]; then other=B2; else other=B1; fi
	svc_write "$(affinity_file "${!other}")"
	sticky 4 "$c1_ns" "$c1_cg"
	[ "$STUCK" = "$other" ]
	svc_write "$(affinity_file "$B1" "$B2")"
	sticky 12 "$c1_ns" "$c1_cg"
	[ "$STUCK" = "$other" ]

	# After the timeout the choice is made afresh (either backend); it sticks again.
	sleep 10.5
	sticky 12 "$c1_ns" "$c1_cg"
	[ "$(svc_kp_packets)" -eq 0 ]
}

@test "services: a named target port resolves per EndpointSlice (8080 in one, 9090 in the other)" {
	local b1 b2 d1 d2 json
	two_backends 9090
	svc_kube_proxy ip "$VIP4" tcp 80 "$B1" 8080
	svc_velod
	# The name decides, not the position: each slice lists another port first.
	svc_write "$(svc_file "[$(svc_service named "$VIP4" -- "$SVC_HTTP")]" "[
		$(svc_slice named-a named IPv4 '[{"name": "metrics", "port": 9100}, {"name": "http", "port": 8080}]' "$B1"),
		$(svc_slice named-b named IPv4 '[{"name": "http", "port": 9090}, {"name": "metrics", "port": 9101}]' "$B2")]")"
	run svc_ctl -j services
	echo "$output"
	[ "$status" -eq 0 ]
	json="$output"
	[ "$(jq -c '[.servicePorts[0].backends[] | "\(.address):\(.port)"] | sort' <<<"$json")" = \
		"$(jq -cn --arg a "$B1:8080" --arg b "$B2:9090" '[$a, $b] | sort')" ]

	svc_pod client "$SVC_ON"
	b1="$(opens "$B1_NS")" b2="$(opens "$B2_NS")"
	# B2 has nothing on 8080, B1 nothing on 9090: a port resolved wrongly is refused. 16 random
	# picks miss a backend 1 in 32768 times.
	connects 16 "$P_NS" "$P_CG" "$VIP4" 80
	d1=$(($(opens "$B1_NS") - b1)) d2=$(($(opens "$B2_NS") - b2))
	echo "B1 got $d1, B2 got $d2"
	[ "$d1" -gt 0 ]
	[ "$d2" -gt 0 ]
	[ $((d1 + d2)) -eq 16 ]
	[ "$(svc_kp_packets)" -eq 0 ]
}

@test "services: a headless Service gets no map entry; a pod's DNS-style traffic to its endpoints is untouched" {
	local out json keys
	svc_pod be '{}'
	BE_NS="$P_NS" BE4="$P_IP4"
	svc_server "$BE_NS" "$P_CG"
	svc_pod other '{}'
	svc_velod
	svc_write "$(svc_file "[$(svc_service web "$VIP4" -- "$SVC_HTTP"),
		$(svc_service hl None -- "$SVC_HTTP" "$SVC_DNS")]" "[
		$(svc_slice web-4 web IPv4 '[{"name": "http", "port": 8080}]' "$P_IP4"),
		$(svc_slice hl-4 hl IPv4 '[{"name": "http", "port": 8080}, {"name": "dns", "protocol": "UDP", "port": 5353}]' "$BE4")]")"
	# Only the web Service's port is in the map, keyed by its ClusterIP.
	keys="$(bpftool map dump pinned "$VTC_BPFFS/velo_svc_v1" -j | jq -c '[.[].formatted.key.port]')"
	echo "service keys (ports): $keys"
	[ "$(bpftool map dump pinned "$VTC_BPFFS/velo_svc_v1" -j | jq length)" -eq 1 ]
	run svc_ctl -j services
	echo "$output"
	[ "$status" -eq 0 ]
	json="$output"
	[ "$(jq -c '[.servicePorts[].name]' <<<"$json")" = '["velotest/web:http/tcp"]' ]

	# A resolver got the endpoint's address from the headless name: it talks to the pod itself.
	svc_pod client "$SVC_ON"
	out="$(svc_client "$P_NS" "$P_CG" udp "$BE4" 5353)"
	echo "$out"
	grep -qx "from $BE4 5353" <<<"$out"
	grep -qx "echo ok" <<<"$out"
	out="$(svc_client "$P_NS" "$P_CG" udpc "$BE4" 5353)"
	echo "$out"
	grep -qx "peer $BE4 5353" <<<"$out"
	grep -qx "echo ok" <<<"$out"
	out="$(svc_client "$P_NS" "$P_CG" tcp "$BE4" 8080 65536)"
	echo "$out"
	grep -qx "peer $BE4 8080" <<<"$out"
	[ "$(awk '$1 == "sent" { print $2 }' <<<"$out")" = "$(awk '$1 == "got" { print $2 }' <<<"$out")" ]
	# Nothing was translated (the web Service wasn't dialled).
	run svc_ctl -j services
	[ "$status" -eq 0 ]
	[ "$(jq '[.servicePorts[].translations] | add' <<<"$output")" -eq 0 ]
}

@test "services: a backend on the other node is reached over the host-gw route, bypassing kube-proxy" {
	local cg be_cg out kp
	mn_setup
	MN_USED=1
	mkdir -p "$VT/n1" "$VT/n2"
	mn_underlay
	mn_nodes 2
	be_cg="/velotest-$VT_TAG-$BATS_TEST_NUMBER-be"
	mkdir "$VTC_MOUNT$be_cg"
	VTC_CGROUPS+=("$VTC_MOUNT$be_cg")
	mn_add 2 mn-be '{}' "$be_cg"
	BE_NS="$MN_POD" BE4="$MN_IP4"
	[[ $BE4 == 10.77.2.* ]]
	svc_server "$BE_NS" "$be_cg"
	jq -cn --arg vip "$VIP4" --arg be "$BE4" '{services: [{metadata: {name: "remote",
		namespace: "velotest"}, spec: {clusterIP: $vip, clusterIPs: [$vip],
		ports: [{name: "http", protocol: "TCP", port: 80}]}}],
		endpointSlices: [{metadata: {name: "remote-4", namespace: "velotest",
		labels: {"kubernetes.io/service-name": "remote"}}, addressType: "IPv4",
		ports: [{name: "http", port: 8080}],
		endpoints: [{addresses: [$be], conditions: {ready: true}, nodeName: "n2"}]}]}' \
		>"$VT/n1/services.json"
	mn_velod 1 "$(jq -cn --arg f "$VT/n1/services.json" '{servicesFile: $f, servicesSyncMs: 50}')"
	mn_velod 2
	mn_wait_route 1 "^10.77.2.0/24 via 192.168.77.2 dev ul0"
	mn_wait_route 2 "^10.77.1.0/24 via 192.168.77.1 dev ul0"
	for _ in $(seq 100); do
		grep -q 'services: .* service ports' "$VT/n1/velod.log" && break
		sleep 0.05
	done
	grep -q 'services: 1 service ports' "$VT/n1/velod.log"
	# kube-proxy's rule for the VIP on node 1.
	mn_in 1 nft add table ip velotest_kp
	mn_in 1 nft add chain ip velotest_kp svc '{ type nat hook prerouting priority dstnat; policy accept; }'
	mn_in 1 nft add rule ip velotest_kp svc ip daddr "$VIP4" tcp dport 80 counter dnat to "$BE4:8080"

	cg="/velotest-$VT_TAG-$BATS_TEST_NUMBER-client"
	mkdir "$VTC_MOUNT$cg"
	VTC_CGROUPS+=("$VTC_MOUNT$cg")
	mn_add 1 mn-client "$SVC_ON" "$cg"
	[[ $MN_IP4 == 10.77.1.* ]]
	out="$(svc_client "$MN_POD" "$cg" tcp "$VIP4" 80 1048576)"
	echo "$out"
	grep -qx "peer $VIP4 80" <<<"$out"
	[ -n "$(awk '$1 == "sent" { print $2 }' <<<"$out")" ]
	[ "$(awk '$1 == "sent" { print $2 }' <<<"$out")" = "$(awk '$1 == "got" { print $2 }' <<<"$out")" ]
	kp="$(mn_in 1 nft -j list table ip velotest_kp | jq '[.nftables[].rule? // empty | .expr[] | .counter? // empty | .packets] | add // 0')"
	echo "kube-proxy rule packets: $kp"
	[ "$kp" -eq 0 ]
}

@test "services: veloctl sockets names the ClusterIP an accelerated connection came through" {
	local json _
	# shellcheck disable=SC2034 # read by svc_pod
	SVC_ACCEPT_BUGS="$VT_SOCKMAP_KERNEL_BUGS"
	svc_pod be '{"velo.dev/sockmap": "true"}'
	BE_NS="$P_NS" BE4="$P_IP4"
	svc_server "$BE_NS" "$P_CG"
	svc_velod
	svc_write "$(svc_file "[$(svc_service web "$VIP4" -- "$SVC_HTTP")]" \
		"[$(svc_slice web-4 web IPv4 '[{"name": "http", "port": 8080}]' "$BE4")]")"
	svc_pod client '{"velo.dev/services": "true", "velo.dev/sockmap": "true"}'
	# One connection through the VIP, one to the backend's own address, both held open.
	svc_client "$P_NS" "$P_CG" tcp "$VIP4" 80 4096 8 >"$VT/work/via.out" 2>&1 &
	VT_PIDS+=($!)
	svc_client "$P_NS" "$P_CG" tcp "$BE4" 8080 4096 8 >"$VT/work/direct.out" 2>&1 &
	VT_PIDS+=($!)
	for _ in $(seq 100); do
		grep -q '^got' "$VT/work/via.out" && grep -q '^got' "$VT/work/direct.out" && break
		sleep 0.05
	done
	cat "$VT/work/via.out" "$VT/work/direct.out"
	grep -qx "peer $VIP4 80" "$VT/work/via.out"
	grep -qx "peer $BE4 8080" "$VT/work/direct.out"

	# stdout only: a warning on stderr (the iterator didn't load) fails the test too.
	svc_ctl -j sockets >"$VT/work/sockets.json" 2>"$VT/work/sockets.err"
	cat "$VT/work/sockets.json" "$VT/work/sockets.err"
	[ ! -s "$VT/work/sockets.err" ]
	json="$(cat "$VT/work/sockets.json")"
	[ "$(jq '.connections | length' <<<"$json")" -eq 2 ]
	# The translated one: accelerated, between the two pods, through web's ClusterIP.
	[ "$(jq --arg v "$VIP4" --arg b "$BE4" '[.connections[] | select(.accelerated and
		.service.clusterIP == $v and .service.port == 80 and
		(.local.address == $b or .peer.address == $b))] | length' <<<"$json")" -eq 1 ]
	# The direct one names no Service.
	[ "$(jq '[.connections[] | select(.accelerated and .service == null)] | length' <<<"$json")" -eq 1 ]
	run svc_ctl sockets
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q " $VIP4:80  *accelerated$" <<<"$output"
	[ "$(grep -c " -  *accelerated$" <<<"$output")" -eq 1 ]
}

@test "services: /healthz says not ready until the services file is in the maps" {
	local _ health
	svc_velod
	# Listening, the services file not there yet: not ready.
	for _ in $(seq 100); do
		health="$(vt_node curl -s --max-time 5 -w ' %{http_code}' \
			"http://127.0.0.1:$SVC_PORT/healthz" | tr -d '\n')" && break
		sleep 0.05
	done
	echo "healthz: $health"
	[[ "$health" == *" 503" ]]
	[[ "$health" == *"services"*"file"* ]] || [[ "$health" == *"Services"*"file"* ]]
	# A file that doesn't parse is not a sync either.
	echo '{"services": [' >"$VT/services.json"
	for _ in $(seq 40); do
		grep -q "the maps stay as they were" "$VT/velod.log" && break
		sleep 0.05
	done
	grep -q "the maps stay as they were" "$VT/velod.log"
	health="$(vt_node curl -s --max-time 5 -w ' %{http_code}' "http://127.0.0.1:$SVC_PORT/healthz" |
		tr -d '\n')"
	[[ "$health" == *" 503" ]]
	svc_write "$(svc_file "[$(svc_service web "$VIP4" -- "$SVC_HTTP")]" \
		"[$(svc_slice web-4 web IPv4 '[{"name": "http", "port": 8080}]' 10.244.9.9)]")"
	health="$(vt_node curl -s --max-time 5 -w ' %{http_code}' "http://127.0.0.1:$SVC_PORT/healthz" |
		tr -d '\n')"
	echo "healthz: $health"
	[ "$health" = "ok 200" ]
	[ "$(svc_ctl -j services | jq '.servicePorts | length')" -eq 1 ]
}
