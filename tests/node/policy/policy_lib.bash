# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Helpers for the NetworkPolicy truth table (policy_truth.bats) and veloctl policy
# (policy_veloctl.bats), over lib.bash and cgroup_lib.bash: a grid of 3 namespaces x 3 pods
# (x/a .. z/c; namespace labels ns=x.., pod labels pod=a..) wired by velo with "policy": true,
# each pod in a cgroup of its own running tests/node/policy/policy_probe's echo servers on TCP, UDP
# and SCTP ports 53 and 80; velod in the node reading the pods and policies from a policy
# file ($VT/policy.json, Kubernetes-shaped objects) and, on the Service path, a services file;
# a case writes the policies, waits for velod's sync, probes every pair x protocol x port from
# each pod (and from the node) at once, and compares with policy_model.py's verdicts, printing
# Cyclonus-style matrices where they differ. Everything is removed, pass or fail. The grid, its
# policy file, the cases, the probes and the held connections are guest_shared.bash's (the
# kernel matrix's guest runs the same table; lib.bash sources it).

POL_PROBE="${POLICY_PROBE_BIN:-$VELOTEST_REPO/build/tests/policy_probe}"
POL_MODEL="$VELOTEST_REPO/tests/node/policy/policy_model.py"
# The Service path's ClusterIPs: 10.96.0.<index> per grid pod, kube-proxy's DNAT in the node.
POL_SVC_PREFIX=10.96.0.
POL_SVC_CIDR=10.96.0.0/24

pol_setup() {
	vt_setup
	vt_velo_only
	vtc_setup
	[ -x "$POL_PROBE" ] || skip "policy_probe not built (make $POL_PROBE)"
	vt_need_velod POL_VELOD
	POL_CTL="${VELOCTL_BIN:-$VELOTEST_REPO/build/veloctl}"
	command -v curl >/dev/null || skip "curl not installed"
	command -v nft >/dev/null || skip "nft not installed (hack/install-deps.sh)"
	POL_PORT=$((20000 + RANDOM % 20000))
	POL_VELOD_PID=
	POL_KEYS=()
	POL_SERVICES=0
	POL_PODS_JSON=
	declare -gA POL_IP=() POL_IP6=() POL_CG=() POL_NS=() POL_VIP=()
	# What guest_shared.bash's grid helpers read.
	# shellcheck disable=SC2034
	POL_CG_MOUNT="$VTC_MOUNT"
	POL_NODE_NETNS="$VT_NODE"
	POL_WORK="$VT/work"
	# A blackhole for the grid's subnet and ClusterIPs in the node: a missing route never sends
	# pod traffic anywhere else (the node has no uplink; this keeps it so).
	vt_node ip route add blackhole "$POL_SVC_CIDR" 2>/dev/null || true
}

pol_teardown() {
	if [ -n "${POL_VELOD_PID:-}" ]; then
		kill "$POL_VELOD_PID" 2>/dev/null
		wait "$POL_VELOD_PID" 2>/dev/null
	fi
	vt_node nft delete table ip velotest_kp 2>/dev/null || true
	vtc_teardown
	vt_teardown
}

# The hooks of a file that loads this one, unless it defines its own after `load`.
setup() { pol_setup; }
teardown() { pol_teardown; }

# pol_setup_ctl: pol_setup for a file that runs veloctl (pol_ctl); skips without it.
pol_setup_ctl() {
	pol_setup
	[ -x "$POL_CTL" ] || skip "veloctl not built (make)"
}

# pol_ctl ARGS...: veloctl in the node, on this test's pins, run and state dirs; it asks velod's
# local socket (<runDir>/velod.sock) unless ARGS say --agent.
pol_ctl() {
	vt_node "$POL_CTL" --bpffs "$VTC_BPFFS" --run-dir "$VT/run" --state-dir "$VT/state" "$@"
}

# pol_probe_one SRC PROTO DST PORT: ok, timeout or refused, from SRC's netns and cgroup (1.5 s).
pol_probe_one() {
	vtc_run "${POL_NS[$1]}" "${POL_CG[$1]}" "$POL_PROBE" probe -t 1500 \
		<<<"p $2 ${POL_IP[$3]} $4" | awk '{ print $2 }'
}

# pol_conf ANNOTATIONS_JSON CGROUP_REL: velo's config for a grid pod with "policy": true, as
# older velos needed (POL_CONFLIST_POLICY=0: false); velod's switch decides now. IPv4 only
# unless POL_FAMILY says dual.
pol_conf() {
	local conf
	conf="$(vtc_config "$(vt_config -f "${POL_FAMILY:-4}")" "$2" "$1")" || return 1
	conf="$(jq -c --argjson on "$([ "${POL_CONFLIST_POLICY:-1}" = 1 ] && echo true || echo false)" \
		'.policy = $on' <<<"$conf")" || return 1
	if [ -n "${POL_ACCEPT_BUGS:-}" ]; then
		conf="$(vt_accept_kernel_bugs "$conf")" || return 1
	fi
	echo "$conf"
}

# pol_add NS NAME ANNOTATIONS_JSON: one grid pod wired by velo (CNI_ARGS name it NS/NAME, as
# the kubelet does), its servers started. Sets POL_IP, POL_IP6 (dual stack), POL_CG, POL_NS
# for "NS/NAME".
pol_add() {
	local key="$1/$2" cid="ctr-$1-$2" netns cg conf log
	netns="$(vt_pod_new)" || return 1
	cg="/velotest-$VT_TAG-$BATS_TEST_NUMBER-$1-$2"
	mkdir "$VTC_MOUNT$cg" || return 1
	VTC_CGROUPS+=("$VTC_MOUNT$cg")
	conf="$(pol_conf "$3" "$cg")" || return 1
	# VELO_TC_CLSACT (exported by a test) reaches velo too: clsact filters instead of tcx.
	vt_cni ADD "$cid" "$netns" eth0 "$conf" -u CNI_ARGS \
		"CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=$1;K8S_POD_NAME=$2;K8S_POD_INFRA_CONTAINER_ID=$cid" \
		${VELO_TC_CLSACT:+"VELO_TC_CLSACT=$VELO_TC_CLSACT"}
	vt_assert_ok || return 1
	POL_IP[$key]="$(vt_ip "$VT_OUT" 4)"
	# shellcheck disable=SC2034 # policy_frag.bats
	POL_IP6[$key]="$(vt_ip "$VT_OUT" 6)"
	POL_CG[$key]="$cg"
	POL_NS[$key]="$netns"
	POL_KEYS+=("$key")
	POL_PODS_JSON=
	log="$VT/work/serve-$1-$2.log"
	vtc_run "$netns" "$cg" "$POL_PROBE" serve "${POL_PORTS[@]}" >"$log" 2>&1 &
	VT_PIDS+=($!)
	pol_listening "$log" "servers in $key"
}

# pol_grid ANNOTATIONS_JSON: the nine pods.
pol_grid() {
	local ns name
	for ns in "${POL_NAMESPACES[@]}"; do
		for name in "${POL_NAMES[@]}"; do
			pol_add "$ns" "$name" "$1" || return 1
		done
	done
}

# ---------------------------------------------------------------- velod and its files

# pol_velod: velod in the node, policy from $VT/policy.json (and, after pol_services, Services
# from $VT/services.json), written empty first.
pol_velod() {
	local cfg
	mkdir -p "$VT/run"
	pol_file_write "[]" || return 1
	cfg="$(jq -n --arg t "$VT" --arg b "$VTC_BPFFS" --arg n "$POL_NODE_NAME" \
		--arg l "127.0.0.1:$POL_PORT" --arg svc "$POL_SVC_CIDR" '{
		stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: $b, listen: $l,
		reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, reapIntervalMs: 0,
		sourceGuardPrefix: "", nodeName: $n, logLevel: "debug",
		policySource: "file", policyFile: ($t + "/policy.json"), policySyncMs: 50,
		serviceCidrs: [$svc]}')" || return 1
	if [ "$POL_SERVICES" = 1 ]; then
		cfg="$(jq -c --arg t "$VT" '. + {servicesFile: ($t + "/services.json"),
			servicesSyncMs: 50}' <<<"$cfg")" || return 1
	fi
	echo "$cfg" >"$VT/velod.json"
	# nsenter execs velod: $! is velod itself.
	nsenter --net="/run/netns/$VT_NODE" "$POL_VELOD" --config "$VT/velod.json" \
		2>>"$VT/velod.log" &
	POL_VELOD_PID=$!
	pol_wait_sync 1 || return 1
}

# pol_metric NAME_WITH_LABELS: a sample's value from velod's /metrics ("" when absent).
pol_metric() {
	vt_node curl -sf --max-time 5 "http://127.0.0.1:$POL_PORT/metrics" |
		awk -v n="$1" '$1 == n { print $2 }'
}

# pol_wait_sync N: waits (10 s) until velod has synced its policy at least N times.
pol_wait_sync() {
	local _ got
	for _ in $(seq 200); do
		got="$(pol_metric velo_policy_syncs_total)"
		[ -n "$got" ] && [ "${got%.*}" -ge "$1" ] && return 0
		kill -0 "$POL_VELOD_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "velod did not sync the policy file $1 times (velo_policy_syncs_total: ${got:-none}):"
	tail -n 15 "$VT/velod.log"
	return 1
}

pol_file_write() {
	pol_file "$1" >"$VT/policy.json.tmp" || return 1
	mv "$VT/policy.json.tmp" "$VT/policy.json"
}

# pol_apply POLICIES_JSON_ARRAY: the policy file with these policies, then waits for velod's
# next sync.
pol_apply() {
	local before
	before="$(pol_metric velo_policy_syncs_total)"
	before="${before%.*}"
	pol_file_write "$1" || return 1
	pol_wait_sync $((${before:-0} + 1))
}

# ---------------------------------------------------------------- the Service path

# pol_services: one ClusterIP per grid pod (10.96.0.<n>, TCP and UDP 53 and 80 to itself) in
# the services file, and kube-proxy's DNAT for each in the node (what an opted-in pod's
# connect-time translation doesn't catch, SCTP among it, takes kube-proxy's path).
pol_services() {
	local key i=1 svcs="" slices="" ports slice_ports proto port
	ports="$(jq -cn '[["TCP", "UDP", "SCTP"][] as $p | [53, 80][] |
		{name: (($p | ascii_downcase) + tostring), protocol: $p, port: .}]')"
	slice_ports="$(jq -c 'map(.port = .port)' <<<"$ports")"
	vt_node nft add table ip velotest_kp || return 1
	vt_node nft add chain ip velotest_kp svc \
		'{ type nat hook prerouting priority dstnat; policy accept; }' || return 1
	for key in "${POL_KEYS[@]}"; do
		POL_VIP[$key]="$POL_SVC_PREFIX$i"
		svcs+="${svcs:+,}$(jq -cn --arg n "svc-${key/\//-}" --arg ip "${POL_VIP[$key]}" \
			--argjson p "$ports" '{metadata: {name: $n, namespace: "x"},
			spec: {clusterIP: $ip, clusterIPs: [$ip], ports: $p}}')"
		slices+="${slices:+,}$(jq -cn --arg n "svc-${key/\//-}" --arg ip "${POL_IP[$key]}" \
			--arg node "$POL_NODE_NAME" --argjson p "$slice_ports" '{
			metadata: {name: ($n + "-1"), namespace: "x",
				labels: {"kubernetes.io/service-name": $n}},
			addressType: "IPv4", ports: $p, endpoints: [{addresses: [$ip],
				conditions: {ready: true}, nodeName: $node}]}')"
		for proto in tcp udp sctp; do
			for port in "${POL_PORTS[@]}"; do
				vt_node nft add rule ip velotest_kp svc ip daddr "${POL_VIP[$key]}" \
					"$proto" dport "$port" dnat to "${POL_IP[$key]}:$port" || return 1
			done
		done
		i=$((i + 1))
	done
	jq -cn --argjson s "[$svcs]" --argjson e "[$slices]" '{services: $s, endpointSlices: $e}' \
		>"$VT/services.json"
	POL_SERVICES=1
}

# ---------------------------------------------------------------- probing

# pol_check CASE POLICIES_JSON_ARRAY: applies the policies, probes every pair, compares with
# the model. Prints the diff matrices and fails on any difference.
pol_check() {
	local name="$1" dir="$VT/work/case-$1"
	mkdir -p "$dir"
	pol_apply "$2" || return 1
	cp "$VT/policy.json" "$dir/policy.json"
	pol_probe_files "$dir" "$VT_NODE_ADDR4"
	pol_probe_all "$dir" "$POL_PROBE" || return 1
	python3 "$POL_MODEL" --node-addr "$VT_NODE_ADDR4" check "$dir/policy.json" \
		"$dir/model-probes" "$dir/results" "$name"
}
