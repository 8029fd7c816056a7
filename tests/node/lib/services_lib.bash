# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Helpers for tests/node/services/services.bats, over lib.bash and cgroup_lib.bash: pods
# with cgroups of their own wired by velo, velod keeping the velo_svc_* maps
# from a services file ($VT/services.json), kube-proxy's ClusterIP rules
# reproduced with nftables in the node netns (tables velotest_kp*), and a
# Python client and server (tests/node/lib/services_peer.py). Everything is
# removed, pass or fail.

SVC_PEER="$VELOTEST_REPO/tests/node/lib/services_peer.py"
SVC_NODE=node-a
# The annotation that opts a pod in, and the Service ports the tests publish.
SVC_ON='{"velo.dev/services": "true"}'
SVC_HTTP='{"name": "http", "protocol": "TCP", "port": 80}'
SVC_DNS='{"name": "dns", "protocol": "UDP", "port": 53}'

# The hooks of a file that loads this one, unless it defines its own after `load`.
setup() { svc_setup; }
teardown() { svc_teardown; }

svc_setup() {
	vt_setup
	vt_velo_only
	vtc_setup
	command -v nft >/dev/null || skip "nft not installed (hack/install-deps.sh)"
	vt_need_velod SVC_VELOD
	vt_need_veloctl SVC_CTL
	command -v curl >/dev/null || skip "curl not installed"
	# velod listens in the node netns only.
	SVC_PORT=$((20000 + RANDOM % 20000))
	SVC_SYNCS=0
	SVC_VELOD_PID=
}

svc_teardown() {
	if [ -n "${SVC_VELOD_PID:-}" ]; then
		kill "$SVC_VELOD_PID" 2>/dev/null
		wait "$SVC_VELOD_PID" 2>/dev/null
	fi
	vt_node nft delete table ip velotest_kp 2>/dev/null || true
	vt_node nft delete table ip6 velotest_kp 2>/dev/null || true
	# velod and the servers are in VT_PIDS (vt_teardown); pods' processes go with cgroup.kill.
	vtc_teardown
	vt_teardown
}

# svc_pod TAG ANNOTATIONS_JSON: a dual-stack pod with its own cgroup.
# Sets P_NS, P_CG (relative to the cgroup mount), P_IP4, P_IP6.
# shellcheck disable=SC2034 # read by the .bats file
svc_pod() {
	P_NS="$(vt_pod_new)" || return 1
	P_CG="/velotest-$VT_TAG-$BATS_TEST_NUMBER-$1"
	mkdir "$VTC_MOUNT$P_CG" || return 1
	VTC_CGROUPS+=("$VTC_MOUNT$P_CG")
	local conf
	conf="$(vtc_config "$(vt_config -f dual)" "$P_CG" "$2")" || return 1
	# The socket short-circuit on a kernel whose sockhash probes fail: accept the bugs by name,
	# as an operator would, so the test exercises the accelerated path (docs/sockmap.md).
	if [ -n "${SVC_ACCEPT_BUGS:-}" ]; then
		conf="$(jq -c --arg b "$SVC_ACCEPT_BUGS" '.sockmapAcceptKernelBugs = ($b | split(" "))' \
			<<<"$conf")" || return 1
	fi
	vt_add "$P_NS" "ctr-$1" "$conf" || return 1
	P_IP4="$(vt_ip "$VT_RESULT" 4)"
	P_IP6="$(vt_ip "$VT_RESULT" 6)"
}

# svc_peer_in POD CGROUP LOG MODE ARGS...: services_peer.py MODE (a server) in the pod, output
# to LOG; waits (5 s) until it says it is listening.
svc_peer_in() {
	local _ log="$3"
	vtc_run "$1" "$2" timeout 120 python3 "$SVC_PEER" "${@:4}" >"$log" 2>&1 &
	VT_PIDS+=($!)
	for _ in $(seq 50); do
		grep -q listening "$log" && return 0
		sleep 0.1
	done
	echo "server did not start: $(cat "$log")"
	return 1
}

# svc_server POD CGROUP [TCP_PORT]: the peer's TCP digest server on TCP_PORT (8080) and UDP echo
# on 5353 (dual-stack).
svc_server() {
	svc_peer_in "$1" "$2" "$VT/work/server-$1.log" server "${3:-8080}" 5353
}

# svc_velod: velod in the node keeping the maps from $VT/services.json.
svc_velod() {
	mkdir -p "$VT/run"
	jq -n --arg t "$VT" --arg b "$VTC_BPFFS" --arg n "$SVC_NODE" --arg l "127.0.0.1:$SVC_PORT" '{
		stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: $b, listen: $l,
		reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, reapIntervalMs: 0,
		sourceGuardPrefix: "", servicesFile: ($t + "/services.json"), servicesSyncMs: 50,
		nodeName: $n}' >"$VT/velod.json"
	# nsenter execs velod: $! is velod itself (a function in the background would be a subshell).
	nsenter --net="/run/netns/$VT_NODE" "$SVC_VELOD" --config "$VT/velod.json" \
		2>>"$VT/velod.log" &
	SVC_VELOD_PID=$!
}

# svc_write JSON: the services file, then waits until velod has synced it into the maps.
svc_write() {
	local _
	SVC_SYNCS=$((SVC_SYNCS + 1))
	echo "$1" >"$VT/services.json.tmp"
	mv "$VT/services.json.tmp" "$VT/services.json"
	for _ in $(seq 100); do
		[ "$(grep -c 'services: .* service ports' "$VT/velod.log" 2>/dev/null)" -ge "$SVC_SYNCS" ] &&
			return 0
		sleep 0.05
	done
	echo "velod did not sync the services file:"
	tail -n 5 "$VT/velod.log"
	return 1
}

# svc_service NAME IP... -- PORT_JSON...: a Service object (ClusterIP, one per family).
svc_service() {
	local name="$1" ips=() svc_ports
	shift
	while [ "$1" != -- ]; do
		ips+=("$1")
		shift
	done
	shift
	svc_ports="[$(
		IFS=,
		echo "$*"
	)]"
	jq -cn --arg n "$name" --args '{metadata: {name: $n, namespace: "velotest"},
		spec: {clusterIP: $ARGS.positional[0], clusterIPs: $ARGS.positional}}' "${ips[@]}" |
		jq -c --argjson p "$svc_ports" '.spec.ports = $p'
}

# svc_slice NAME SERVICE FAMILY PORTS_JSON ENDPOINT_IP...: an EndpointSlice of ready endpoints
# on this node.
svc_slice() {
	local name="$1" service="$2" family="$3" slice_ports="$4"
	shift 4
	jq -cn --arg n "$name" --arg s "$service" --arg f "$family" --argjson p "$slice_ports" \
		--arg node "$SVC_NODE" --args '{metadata: {name: $n, namespace: "velotest",
		labels: {"kubernetes.io/service-name": $s}}, addressType: $f, ports: $p,
		endpoints: [$ARGS.positional[] | {addresses: [.], conditions: {ready: true},
		nodeName: $node}]}' "$@"
}

# svc_file SERVICES_JSON_ARRAY SLICES_JSON_ARRAY
svc_file() {
	jq -cn --argjson s "$1" --argjson e "$2" '{services: $s, endpointSlices: $e}'
}

# svc_kube_proxy FAMILY VIP PROTO PORT BACKEND BACKEND_PORT: kube-proxy's DNAT for a ClusterIP
# port (the nat table's prerouting, where the pod's first packet meets it).
svc_kube_proxy() {
	local fam="$1" vip="$2" proto="$3" port="$4" be="$5" be_port="$6" l3=ip
	[ "$fam" = ip6 ] && l3=ip6 && be="[$be]"
	vt_node nft add table "$fam" velotest_kp
	vt_node nft add chain "$fam" velotest_kp svc \
		'{ type nat hook prerouting priority dstnat; policy accept; }'
	vt_node nft add rule "$fam" velotest_kp svc "$l3" daddr "$vip" "$proto" dport "$port" \
		counter dnat to "$be:$be_port"
}

# svc_kube_proxy_reject FAMILY VIP PROTO PORT: kube-proxy's REJECT for a Service without
# endpoints (its filter rules see the forwarded packet).
svc_kube_proxy_reject() {
	local fam="$1" vip="$2" proto="$3" port="$4" l3=ip
	[ "$fam" = ip6 ] && l3=ip6
	vt_node nft add table "$fam" velotest_kp
	vt_node nft add chain "$fam" velotest_kp noep \
		'{ type filter hook forward priority filter; policy accept; }'
	vt_node nft add rule "$fam" velotest_kp noep "$l3" daddr "$vip" "$proto" dport "$port" \
		counter reject
}

# svc_kp_packets: packets kube-proxy's rules (both families) have counted so far.
svc_kp_packets() {
	local fam n total=0
	for fam in ip ip6; do
		n="$(vt_node nft -j list table "$fam" velotest_kp 2>/dev/null |
			jq '[.nftables[].rule? // empty | .expr[] | .counter? // empty | .packets] | add // 0')"
		total=$((total + ${n:-0}))
	done
	echo "$total"
}

# svc_ctl ARGS...: veloctl on this test's pins and velod's names.
svc_ctl() {
	vt_node "$SVC_CTL" --bpffs "$VTC_BPFFS" --run-dir "$VT/run" --state-dir "$VT/state" \
		--agent "" "$@"
}

# svc_metric NAME_WITH_LABELS: the sample's value from velod's /metrics ("" when absent).
svc_metric() {
	vt_node curl -sf --max-time 5 "http://127.0.0.1:$SVC_PORT/metrics" |
		awk -v n="$1" '$1 == n { print $2 }'
}

# svc_client POD CGROUP ARGS...: the peer's client inside the pod's cgroup.
svc_client() {
	local pod="$1" cg="$2"
	shift 2
	vtc_run "$pod" "$cg" timeout 30 python3 "$SVC_PEER" "$@"
}
